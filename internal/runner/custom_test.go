package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/custom"
	"github.com/wasmgap/wasmgap/internal/measure"
)

const customSieve = `package kernel

func Primes(n int) int64 {
	composite := make([]bool, n)
	var count int64
	for i := 2; i < n; i++ {
		if !composite[i] {
			count++
			for j := i * i; j < n; j += i {
				composite[j] = true
			}
		}
	}
	return count
}
`

// buildCustom builds src with a builder whose builds live in a temporary folder and
// whose Go cache is the shared warm one.
func buildCustom(t *testing.T, b *custom.Builder, src string) *custom.Kernel {
	t.Helper()
	k, err := b.Build(context.Background(), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newCustomBuilder(t *testing.T) *custom.Builder {
	return custom.NewBuilder(custom.Options{Dir: t.TempDir(), GoCache: filepath.Join(custom.DefaultDir(), "gocache")})
}

func TestCustomKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	// Builds of user kernels wait on the go command more than they compute: the
	// custom tests run side by side (separate build folders, one shared Go cache).
	t.Parallel()
	b := newCustomBuilder(t)
	k := buildCustom(t, b, customSieve)
	jobs, err := Plan{Custom: k, Args: map[string]int{"n": 100_000}, Options: measure.Options{Runs: 2, Warmup: 1}, Timeout: time.Minute}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != len(custom.Engines) {
		t.Fatalf("%d jobs, want one per engine of %v", len(jobs), custom.Engines)
	}
	for _, job := range jobs {
		r, err := Run(context.Background(), job, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Failed() || r.Value != 9592 || r.Kernel != "Primes" || r.Engine != job.Engine() {
			t.Errorf("%s: %+v", job.Engine(), r)
		}
	}

	// A native run (the kernel was not built natively), or an unknown parameter, is refused.
	if _, err := (Plan{Custom: k, Engines: []string{"native"}, Options: measure.Defaults()}).Jobs(); err == nil || !strings.Contains(err.Error(), "native runs of user kernels are off") {
		t.Errorf("native plan: %v", err)
	}
	if _, err := (Plan{Custom: k, Args: map[string]int{"m": 1}, Options: measure.Defaults()}).Jobs(); err == nil || !strings.Contains(err.Error(), `parameter "m"`) {
		t.Errorf("unknown parameter: %v", err)
	}
}

func TestCustomKernelLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	// Builds of user kernels wait on the go command more than they compute: the
	// custom tests run side by side (separate build folders, one shared Go cache).
	t.Parallel()
	b := newCustomBuilder(t)
	endless := buildCustom(t, b, "package kernel\n\nfunc Spin(n int) int64 {\n\tx := int64(n)\n\tfor {\n\t\tx = x*31 + 7\n\t}\n}\n")
	alloc := buildCustom(t, b, "package kernel\n\nfunc Alloc(gib int) int64 {\n\ts := make([]byte, gib<<30)\n\tfor i := range s {\n\t\ts[i] = 1\n\t}\n\treturn int64(len(s))\n}\n")
	// The endless loop keeps a core busy on each engine until its limit: 1 s shows the
	// cut as well as more would.
	for _, tc := range []struct {
		k     *custom.Kernel
		args  map[string]int
		limit time.Duration
		want  string
	}{
		{endless, map[string]int{"n": 1}, time.Second, "timed out after 1s"},
		{alloc, map[string]int{"gib": 10}, 3 * time.Second, ""},
	} {
		jobs, err := Plan{Custom: tc.k, Args: tc.args, Options: measure.Options{Runs: 1}, Timeout: tc.limit}.Jobs()
		if err != nil {
			t.Fatal(err)
		}
		for _, job := range jobs {
			r, err := Run(context.Background(), job, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Failed() || !strings.Contains(r.Failure, tc.want) {
				t.Errorf("%s on %s: %q, want a failure with %q", job.Label(), job.Engine(), r.Failure, tc.want)
			}
			t.Logf("%s on %s: %s", job.Label(), job.Engine(), r.Failure)
		}
	}
	// Past the module's 1 GiB cap but within wasm32's reach: out of memory.
	jobs, err := Plan{Custom: alloc, Engines: []string{"wazero-compiler"}, Args: map[string]int{"gib": 2}, Options: measure.Options{Runs: 1}, Timeout: time.Minute}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	if r, err := Run(context.Background(), jobs[0], Options{}); err != nil || !strings.Contains(r.Failure, "out of memory") {
		t.Errorf("Alloc(2) on wazero-compiler: %q, %v; want out of memory", r.Failure, err)
	}
	if _, err := os.Stat(endless.ModulePath()); err != nil {
		t.Error(err)
	}
}

func TestCustomKernelNative(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	// Builds of user kernels wait on the go command more than they compute: the
	// custom tests run side by side (separate build folders, one shared Go cache).
	t.Parallel()
	b := custom.NewBuilder(custom.Options{Dir: t.TempDir(), GoCache: filepath.Join(custom.DefaultDir(), "gocache"), Native: true})
	k := buildCustom(t, b, customSieve)
	if !k.Native {
		t.Fatalf("built %+v: not native", k)
	}
	deep := buildCustom(t, b, "package kernel\n\nfunc Deep(n int) int64 {\n\tif n == 0 {\n\t\treturn 0\n\t}\n\treturn Deep(n-1) + 1\n}\n")
	for _, tc := range []struct {
		k    *custom.Kernel
		n    int
		want string
	}{{k, 100_000, ""}, {deep, 1 << 30, "stack overflow"}} {
		jobs, err := Plan{Custom: tc.k, Engines: []string{"native"}, Args: map[string]int{"n": tc.n}, Options: measure.Options{Runs: 2}, Timeout: time.Minute}.Jobs()
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(context.Background(), jobs[0], Options{})
		if err != nil {
			t.Fatal(err)
		}
		if tc.want == "" && (r.Failed() || r.Value != 9592) {
			t.Errorf("native sieve: %+v", r)
		}
		if tc.want != "" && !strings.Contains(r.Failure, tc.want) {
			t.Errorf("native Deep(2^30): %q, want %q", r.Failure, tc.want)
		}
	}
}
