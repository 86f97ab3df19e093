//go:build long

package longtest

// Enabled reports whether the long tests run: true when the module is built
// with the long tag (go test -tags long), false otherwise.
const Enabled = true
