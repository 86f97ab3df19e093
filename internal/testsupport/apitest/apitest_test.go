package apitest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestWantErr(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
		fail string // a part of WantErr's message, or "" for nil
	}{
		{nil, "", "no error"},
		{nil, "bad", `no error, want "bad"`},
		{errors.New("pkg: bad value"), "", ""},
		{errors.New("pkg: bad value"), "bad", ""},
		{errors.New("pkg: bad value"), "good", `error "pkg: bad value", want "good"`},
	} {
		got := WantErr(tc.err, tc.want)
		if (got == nil) != (tc.fail == "") || got != nil && !strings.Contains(got.Error(), tc.fail) {
			t.Errorf("WantErr(%v, %q) = %v, want %q", tc.err, tc.want, got, tc.fail)
		}
	}
}

func TestWantErrPrefix(t *testing.T) {
	for _, tc := range []struct {
		err  error
		fail string
	}{
		{nil, "no error"},
		{errors.New("pkg: bad"), ""},
		{errors.New("other: pkg: bad"), `does not begin "pkg: "`},
	} {
		got := WantErrPrefix(tc.err, "pkg: ")
		if (got == nil) != (tc.fail == "") || got != nil && !strings.Contains(got.Error(), tc.fail) {
			t.Errorf("WantErrPrefix(%v) = %v, want %q", tc.err, got, tc.fail)
		}
	}
}

func TestWantZero(t *testing.T) {
	if err := WantZero(true, 3); err != nil {
		t.Errorf("WantZero(true) = %v", err)
	}
	if err := WantZero(false, 3); err == nil || !strings.Contains(err.Error(), "got 3") {
		t.Errorf("WantZero(false, 3) = %v", err)
	}
	if err := WantZero(false, nil); err == nil || err.Error() != "not the documented result" {
		t.Errorf("WantZero(false, nil) = %v", err)
	}
}

func TestCall(t *testing.T) {
	if err := Call(func() error { return nil }); err != nil {
		t.Errorf("Call of nil: %v", err)
	}
	want := errors.New("x")
	if err := Call(func() error { return want }); err != want {
		t.Errorf("Call of an error: %v", err)
	}
	if err := Call(func() error { panic("boom") }); err == nil || !strings.HasPrefix(err.Error(), "panic: boom") {
		t.Errorf("Call of a panic: %v", err)
	}
}

// recorder is a testing.TB that keeps what Check reports. Its Fatal ends
// the goroutine, as testing's does.
type recorder struct {
	testing.TB
	errs  []string
	fatal bool
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatal(args ...any) {
	r.errs = append(r.errs, fmt.Sprint(args...))
	r.fatal = true
	runtime.Goexit()
}

// writePackage writes a package of src into a new folder and returns it.
func writePackage(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// A test file's names are not part of the API.
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\nfunc TestX() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const pkg = `package p

type T struct{}
type u struct{}
type G[E any] struct{}

func F() {}
func (T) M() {}
func (*T) N() {}
func (u) M() {}
func (G[E]) M() {}
func f() {}
`

func TestExportedFuncs(t *testing.T) {
	got, err := ExportedFuncs(writePackage(t, pkg))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"F", "G.M", "T.M", "T.N"}; !slices.Equal(got, want) {
		t.Errorf("ExportedFuncs = %q, want %q", got, want)
	}
	if _, err := ExportedFuncs(writePackage(t, "package p\nfunc")); err == nil {
		t.Error("ExportedFuncs of a broken file: no error")
	}
}

func TestMissing(t *testing.T) {
	got := Missing([]string{"F", "T.M", "T.N"}, []string{"F/nil", "T.M", "T.Nx/zero"})
	if want := []string{"T.N"}; !slices.Equal(got, want) {
		t.Errorf("Missing = %q, want %q", got, want)
	}
}

func TestCheck(t *testing.T) {
	dir := writePackage(t, pkg)
	ok := func() error { return nil }
	all := []Case{{"F", ok}, {"G.M/zero", ok}, {"T.M/zero", ok}, {"T.N/nil", ok}}
	var ran []string
	for i := range all {
		name := all[i].Name
		all[i].Call = func() error { ran = append(ran, name); return nil }
	}
	for _, tc := range []struct {
		name  string
		dir   string
		cases []Case
		min   int
		want  []string // parts of the reports, one a report
	}{
		{"all covered", dir, all, 4, nil},
		{"one left out", dir, all[1:], 4, []string{"no nil or zero call of F"}},
		{"two left out", dir, all[:2], 0, []string{"no nil or zero call of T.M, T.N"}},
		{"too few names", dir, all, 5, []string{"only 4 exported names found, want at least 5"}},
		{"no names", t.TempDir(), nil, 0, []string{"only 0 exported names found, want at least 1"}},
		{"failing case", dir, append([]Case{{"F/bad", func() error { return errors.New("wrong") }}}, all...), 4,
			[]string{"F/bad: wrong"}},
		{"panicking case", dir, append([]Case{{"T.M/nil", func() error { panic("boom") }}}, all...), 4,
			[]string{"T.M/nil: panic: boom"}},
		{"broken package", writePackage(t, "package p\nfunc"), all, 0, []string{"expected"}},
	} {
		ran = nil
		r := &recorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			Check(r, tc.dir, tc.cases, tc.min)
		}()
		<-done
		if len(r.errs) != len(tc.want) {
			t.Errorf("%s: reports %q, want %q", tc.name, r.errs, tc.want)
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(r.errs[i], w) {
				t.Errorf("%s: report %q, want %q", tc.name, r.errs[i], w)
			}
		}
		if r.fatal != (tc.name == "broken package") {
			t.Errorf("%s: fatal %t", tc.name, r.fatal)
		}
		// Every case ran, in order.
		var want []string
		for _, c := range tc.cases {
			if slices.ContainsFunc(all, func(a Case) bool { return a.Name == c.Name }) {
				want = append(want, c.Name)
			}
		}
		if !slices.Equal(ran, want) {
			t.Errorf("%s: ran %q, want %q", tc.name, ran, want)
		}
	}
}
