//go:build !amd64 || noasm

package preprocess

const hasVector = false

func log1pAbsAVX2(x []float64) int { return 0 }

func asinhAVX2(x []float64, inv float64) int { return 0 }
