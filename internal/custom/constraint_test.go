package custom

import (
	"bytes"
	"errors"
	"go/build"
	"io"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"
)

// Build constraints in every spelling the go command reads are refused, so that no build
// excludes the kernel's file (a build that would fail with the server's paths).
func TestCheckRefusesBuildConstraints(t *testing.T) {
	body := "\npackage kernel\n\nfunc F(n int) int64 { return int64(n) }\n"
	for _, line := range []string{"//+build ignore", "//\t+build linux", "// +build ignore", "//  +build !linux", "//go:build ignore", "//\v+build ignore"} {
		src := line + "\n" + body
		if !constrained(src) {
			t.Errorf("go/build does not read %q as a constraint: the test is wrong", line)
		}
		_, err := Check([]byte(src))
		var errs Errors
		if !errors.As(err, &errs) || errs[0].Line != 1 {
			t.Errorf("Check(%q) = %v, want a refusal at line 1", line, err)
		}
	}
}

// constrained reports whether go/build reads a build constraint in src (whatever its
// value): a tag that influences the file's selection, or the file left out.
func constrained(src string) bool {
	ctxt := build.Default
	ctxt.GOOS, ctxt.GOARCH, ctxt.CgoEnabled = "wasip1", "wasm", false
	ctxt.GOPATH, ctxt.Dir = "", ""
	ctxt.ReadDir = func(string) ([]fs.FileInfo, error) { return []fs.FileInfo{fileInfo{len(src)}}, nil }
	ctxt.OpenFile = func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(src)), nil }
	ctxt.IsDir = func(string) bool { return true }
	ctxt.HasSubdir = func(string, string) (string, bool) { return "", false }
	p, err := ctxt.ImportDir("/kernel", build.ImportComment)
	if err != nil && p == nil {
		return true
	}
	return len(p.AllTags) > 0 || len(p.IgnoredGoFiles) > 0 || len(p.InvalidGoFiles) > 0 && len(p.GoFiles) == 0
}

type fileInfo struct{ size int }

func (fi fileInfo) Name() string       { return "kernel.go" }
func (fi fileInfo) Size() int64        { return int64(fi.size) }
func (fi fileInfo) Mode() fs.FileMode  { return 0o644 }
func (fi fileInfo) ModTime() time.Time { return time.Time{} }
func (fi fileInfo) IsDir() bool        { return false }
func (fi fileInfo) Sys() any           { return nil }

var _ os.FileInfo = fileInfo{}

// FuzzCheckBuildConstraint puts a fuzzed line (or lines) at the head of a valid kernel:
// whatever Check accepts, go/build must read no build constraint in.
func FuzzCheckBuildConstraint(f *testing.F) {
	for _, s := range []string{"//+build ignore", "//\t+build linux", "// +build", "//go:build !linux", "/* +build ignore */", "// plus build", "//\u00a0+build x", "//+build\u0085x"} {
		f.Add([]byte(s))
	}
	body := []byte("\n\npackage kernel\n\nfunc F(n int) int64 { return int64(n) }\n")
	f.Fuzz(func(t *testing.T, head []byte) {
		src := append(bytes.Clone(head), body...)
		if _, err := Check(src); err != nil {
			return
		}
		if constrained(string(src)) {
			t.Fatalf("Check accepted %q, in which go/build reads a build constraint", head)
		}
	})
}
