package kernel

// Bandwidth returns the bandwidth sigma of an RBF or Laplacian kernel, and
// 0 for kernels without one (linear, delta, nil).
func Bandwidth(k Kernel) float64 {
	switch k := k.(type) {
	case RBF:
		return k.Sigma
	case Laplacian:
		return k.Sigma
	}
	return 0
}
