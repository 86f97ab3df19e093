// Package apitest helps tests check a package's exported API as a whole:
// ExportedFuncs lists the functions and methods that a table of calls must
// cover, Call runs one call, turning a panic into an error, and Check runs
// a table of Cases and reports the exported names it leaves out.
package apitest

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"testing"
)

// ExportedFuncs lists the exported functions, and the exported methods of
// exported types, of the Go package in dir (test files excluded), as "Func"
// and "Type.Method", sorted.
func ExportedFuncs(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var names []string
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			if fd.Recv == nil {
				names = append(names, fd.Name.Name)
				continue
			}
			typ := fd.Recv.List[0].Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			if ix, ok := typ.(*ast.IndexExpr); ok { // generic receiver
				typ = ix.X
			}
			if id, ok := typ.(*ast.Ident); ok && id.IsExported() {
				names = append(names, id.Name+"."+fd.Name.Name)
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// Call runs f and returns its error, or an error with the stack when f
// panics.
func Call(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return f()
}

// Missing returns the names of want that are not keys of covered, where a
// key may carry a "/variant" suffix.
func Missing(want []string, covered []string) []string {
	seen := map[string]bool{}
	for _, c := range covered {
		name, _, _ := strings.Cut(c, "/")
		seen[name] = true
	}
	var out []string
	for _, w := range want {
		if !seen[w] {
			out = append(out, w)
		}
	}
	return out
}

// Case is one call of an exported function or method, typically with nil,
// zero or negative arguments. Call returns nil when the result is the one
// documented (often an error), and otherwise an error describing the wrong
// result.
type Case struct {
	Name string // "Func" or "Type.Method", optionally then "/variant"
	Call func() error
}

// WantErr returns nil when err is an error whose message contains want,
// and otherwise an error saying what was wrong. An empty want accepts any
// error.
func WantErr(err error, want string) error {
	if err == nil {
		if want == "" {
			return errors.New("no error")
		}
		return fmt.Errorf("no error, want %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		return fmt.Errorf("error %q, want %q", err, want)
	}
	return nil
}

// WantErrPrefix returns nil when err is an error whose message begins with
// prefix, and otherwise an error saying what was wrong.
func WantErrPrefix(err error, prefix string) error {
	if err == nil {
		return fmt.Errorf("no error, want one beginning %q", prefix)
	}
	if !strings.HasPrefix(err.Error(), prefix) {
		return fmt.Errorf("error %q does not begin %q", err, prefix)
	}
	return nil
}

// WantZero returns nil when ok, the check of a documented result, holds,
// and otherwise an error that shows got (unless got is nil).
func WantZero(ok bool, got any) error {
	switch {
	case ok:
		return nil
	case got == nil:
		return errors.New("not the documented result")
	}
	return fmt.Errorf("got %v, want the documented result", got)
}

// Check runs every case through Call, reporting each failure or panic with
// the case's name, and checks the cases against ExportedFuncs(dir): it
// reports the exported names that no case covers, and fails when fewer
// than min exported names, or none, were found (a wrong dir or a broken
// parse would otherwise leave nothing to cover).
func Check(t testing.TB, dir string, cases []Case, min int) {
	t.Helper()
	names := make([]string, 0, len(cases))
	for _, c := range cases {
		names = append(names, c.Name)
		if err := Call(c.Call); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	want, err := ExportedFuncs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if missing := Missing(want, names); len(missing) > 0 {
		t.Errorf("no nil or zero call of %s", strings.Join(missing, ", "))
	}
	if len(want) < min || len(want) == 0 {
		t.Errorf("only %d exported names found, want at least %d", len(want), max(min, 1))
	}
}
