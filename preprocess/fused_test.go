//go:build !amd64.v3

package preprocess

// goFusesFMA: without GOAMD64=v3 the compiler does not fuse x*y + z on
// amd64, and on other architectures the vector code is not used.
const goFusesFMA = false
