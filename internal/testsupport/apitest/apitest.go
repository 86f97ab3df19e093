// Package apitest helps tests check a package's exported API as a whole:
// ExportedFuncs lists the functions and methods that a table of calls must
// cover, and Call runs one call, turning a panic into an error.
package apitest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
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
