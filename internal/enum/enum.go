// Package enum names the values of the library's small enumerations (the
// solver, method, form and landmark choices): one table gives a type's
// String and Parse methods, so that the two always agree.
package enum

import (
	"fmt"
	"strings"
)

// Names is the table of names of the enumeration E, whose values are
// 0, 1, ..., len(Names)-1: Names[v] is the name of v. Type is the type's
// name, used for values outside the table.
type Names[E ~int] struct {
	Type  string
	Names []string
}

// String returns the name of v, or Type(v) for a value without one (as
// "Method(7)").
func (n Names[E]) String(v E) string {
	if n.Valid(v) {
		return n.Names[v]
	}
	return fmt.Sprintf("%s(%d)", n.Type, int(v))
}

// Valid reports whether v has a name.
func (n Names[E]) Valid(v E) bool {
	return v >= 0 && int(v) < len(n.Names)
}

// Parse returns the value whose name is s, compared case-insensitively
// (strings.EqualFold), and whether there is one.
func (n Names[E]) Parse(s string) (E, bool) {
	for i, name := range n.Names {
		if strings.EqualFold(s, name) {
			return E(i), true
		}
	}
	return 0, false
}

// List returns the names joined by sep, in order (for error messages).
func (n Names[E]) List(sep string) string {
	return strings.Join(n.Names, sep)
}
