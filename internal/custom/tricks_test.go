package custom

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// More ways to a second goroutine, to raw memory or to the toolchain than
// TestCheckRefusesConcurrency and TestCheckRefuses try: goroutines started
// from a closure in a struct literal, a deferred closure, a method expression
// or a generic function, and every //go: directive that changes what the
// compiler lets code do. Each is refused by Check, at its place.
func TestCheckRefusesTricks(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"go in a closure in a struct literal", "package kernel\n\ntype s struct{ f func() }\n\nfunc g() {}\n\nfunc F(n int) int64 {\n\tv := s{f: func() { go g() }}\n\tv.f()\n\treturn 0\n}\n", "go statements are not allowed"},
		{"go in a deferred closure", "package kernel\n\nfunc F(n int) int64 {\n\tdefer func() { go func() {}() }()\n\treturn 0\n}\n", "go statements are not allowed"},
		{"go of a method expression", "package kernel\n\ntype T struct{}\n\nfunc (T) m() {}\n\nfunc F(n int) int64 {\n\tgo T.m(T{})\n\treturn 0\n}\n", "go statements are not allowed"},
		{"go in a generic function", "package kernel\n\nfunc run[T any](f func(T), v T) { go f(v) }\n\nfunc F(n int) int64 { run(func(int) {}, 1); return 0 }\n", "go statements are not allowed"},
		{"go in a method of a global's type", "package kernel\n\ntype w struct{}\n\nfunc (w) start() { go func() {}() }\n\nvar _ = func() int { w{}.start(); return 0 }()\n\nfunc F(n int) int64 { return 0 }\n", "go statements are not allowed"},
		{"//go:noescape (assembly)", "package kernel\n\n//go:noescape\nfunc asm(p *int)\n\nfunc F(n int) int64 { return 0 }\n", "directive //go:noescape"},
		{"//go:nosplit", "package kernel\n\n//go:nosplit\nfunc F(n int) int64 { return 0 }\n", "directive //go:nosplit"},
		{"//go:norace", "package kernel\n\n//go:norace\nfunc F(n int) int64 { return 0 }\n", "directive //go:norace"},
		{"//go:uintptrescapes", "package kernel\n\n//go:uintptrescapes\nfunc g(p uintptr) {}\n\nfunc F(n int) int64 { return 0 }\n", "directive //go:uintptrescapes"},
		{"//go:wasmimport (a WASI socket)", "package kernel\n\n//go:wasmimport wasi_snapshot_preview1 sock_accept\nfunc accept(fd int32) int32\n\nfunc F(n int) int64 { return 0 }\n", "directive //go:wasmimport"},
		{"//go:wasmexport", "package kernel\n\n//go:wasmexport evil\nfunc evil() {}\n\nfunc F(n int) int64 { return 0 }\n", "directive //go:wasmexport"},
		{"//export (cgo)", "package kernel\n\n//export F\nfunc F(n int) int64 { return 0 }\n", "cgo directives are not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check([]byte(tc.src))
			var errs Errors
			if !errors.As(err, &errs) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want a refusal with %q", err, tc.want)
			}
			for _, e := range errs {
				if e.Line == 0 {
					t.Errorf("%q has no place in the source", e.Msg)
				}
			}
		})
	}
}

// What Check lets through of the same tricks is harmless at the build: a
// body-less function (the way to declare one in assembly, of which a kernel
// has none) and an array larger than memory fail to build with a clear
// error and no server path; a directive written with a space is a comment
// to the compiler and builds as plain code. (Recursion and allocation bombs
// build and stop at the worker's limits: runner's TestCustomKernelLimits and
// TestCustomRecursionBomb.)
func TestBuildTricksHarmless(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	b := testBuilder(t)
	for _, tc := range []struct {
		name, src string
		says      string // "" : it builds
	}{
		{"assembly stub", "package kernel\n\nfunc asm(p *int)\n\nfunc F(n int) int64 {\n\tasm(nil)\n\treturn 0\n}\n", "missing function body"},
		{"array larger than memory", "package kernel\n\nvar big [1 << 40]byte\n\nfunc F(n int) int64 { return int64(big[n]) }\n", "too large"},
		{"directive with a space", "package kernel\n\n// go:linkname x runtime.x\nvar x int64 = 7\n\nfunc F(n int) int64 { return x + int64(n) }\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Check([]byte(tc.src)); err != nil {
				t.Fatalf("Check refuses it now (%v): move it to TestCheckRefusesTricks", err)
			}
			k, err := b.Build(context.Background(), []byte(tc.src))
			if tc.says == "" {
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				if _, err := os.Stat(k.ModulePath()); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Build of %s succeeded, want a refusal saying %q", tc.name, tc.says)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Build = %v, want %q", err, tc.says)
			}
			if dir, _ := os.Getwd(); strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), os.TempDir()) {
				t.Errorf("Build = %v: the refusal shows a server path", err)
			}
		})
	}
}
