// Package longtest separates the long tests of the module from the fast
// default suite.
//
// A plain go test runs in seconds and still exercises every property of a
// package on small instances; the long tests (the full problem suites,
// large dimensions, many seeds, real data) run only when the module is
// built with the long tag:
//
//	go test ./...             # the fast suite
//	go test -tags long ./...  # everything
//
// CI runs with the tag. A long test starts with longtest.Skip(t); a test
// that only scales down in the fast suite branches on Enabled.
package longtest

import "testing"

// Skip skips the test unless the long tests are enabled (the long build
// tag), with a message that says how to run it.
func Skip(t testing.TB) {
	t.Helper()
	if !Enabled {
		t.Skip("long test: run with go test -tags long")
	}
}
