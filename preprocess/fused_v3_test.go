//go:build amd64.v3

package preprocess

// goFusesFMA: built with GOAMD64=v3, the compiler fuses x*y + z in package
// math into fused multiply-adds, so math.Log1p and math.Asinh may differ
// from the vector code (which replays the unfused operations) by 1 ulp.
const goFusesFMA = true
