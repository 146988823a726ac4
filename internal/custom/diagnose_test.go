package custom

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
)

// serverPath matches an absolute path of this machine in an answer.
var serverPath = regexp.MustCompile(`(^|[\s"'(=:,])/[\w.+@-]+/`)

// Compiler and linker failures are told as what they are, never as a 503 naming the
// server's folders: data too large for a module is the source's fault (Errors), running
// out of the build's memory or file size is a limit (LimitError).
func TestBuildDiagnoses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	b := testBuilder(t)
	limits := BuildLimits
	t.Cleanup(func() { BuildLimits = limits })
	for _, tc := range []struct {
		name, src string
		set       func()
		limit     bool
		want      string
	}{
		{"symbol too large", "package kernel\n\nvar big [3 << 30]byte\n\nfunc F(n int) int64 { big[n] = 1; return int64(big[n+1]) }\n", nil, false, "symbol too large"},
		{"too much data", "package kernel\n\nvar a, b [1 << 30]byte\n\nfunc F(n int) int64 { a[n], b[n] = 1, 2; return int64(a[n+1] + b[n]) }\n", nil, false, "too large for a module"},
		// The linker needs more than 900 MiB for a 128 MiB array literal.
		{"out of memory", "package kernel\n\nvar x = [1 << 24]int64{1, 2, 3, 1<<24 - 1: 7}\n\nfunc F(n int) int64 { return x[n] }\n", func() { BuildLimits.AddressSpace, BuildLimits.FileSize = 900<<20, 1<<30 }, true, "the build ran out of memory"},
		{"file size", "package kernel\n\nvar x = [1 << 20]int64{1, 2, 3, 1<<20 - 1: 5}\n\nfunc F(n int) int64 { return x[n] }\n", func() { BuildLimits.FileSize = 4 << 20 }, true, "larger than its limit of 4 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			BuildLimits = limits
			if tc.set != nil {
				tc.set()
			}
			_, err := b.Build(context.Background(), []byte(tc.src))
			BuildLimits = limits
			var errs Errors
			var limit *LimitError
			switch {
			case err == nil:
				t.Fatal("Build succeeded")
			case tc.limit && !errors.As(err, &limit), !tc.limit && !errors.As(err, &errs):
				t.Fatalf("Build = %T %v; want a limit %v", err, err, tc.limit)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "redefine") {
				t.Errorf("Build = %v, want %q", err, tc.want)
			}
			if serverPath.MatchString(err.Error()) {
				t.Errorf("the answer names a path of the server: %v", err)
			}
		})
	}
}

// Whatever a failed build prints, the answer names none of the server's paths.
func TestDiagnoseScrubs(t *testing.T) {
	b := NewBuilder(Options{Dir: "/srv/cache/wasmgap/custom"})
	work := "/srv/cache/wasmgap/custom/tmp/build-123"
	for _, text := range []string{
		"build constraints exclude all Go files in " + work + "/kernel",
		"go: open /etc/passwd: permission denied\n# userkernel\n" + os.TempDir() + "/x/y: bad",
		"link: open " + b.opts.GoCache + "/ab/abcdef-d: no such file",
		`main.go:3:2: package userkernel/kernel is not in std (/usr/local/go/src/userkernel/kernel)`,
	} {
		errs, err := b.diagnose(text, errors.New("exit status 1"), work, "/usr/local/go/bin/go")
		if err == nil && len(errs) > 0 {
			err = errs
		}
		if err == nil || serverPath.MatchString(err.Error()) {
			t.Errorf("diagnose(%q) = %v: want an error without paths", text, err)
		}
	}
}
