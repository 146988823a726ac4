package browser_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine/browser"
	"github.com/wasmgap/wasmgap/internal/headless"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/internal/warmup"
	"github.com/wasmgap/wasmgap/kernels"
)

func TestMain(m *testing.M) {
	runner.ServeWorkerIfRequested() // this test binary is also the runner's worker
	serveOrphanIfRequested()
	os.Exit(m.Run())
}

// need skips a test whose browser is not installed, or fails it in CI, where every
// browser test must run; and skips it when the binary embeds no page bundle.
func need(t *testing.T, kind headless.Kind) {
	t.Helper()
	if _, err := headless.Path(kind); errors.Is(err, headless.ErrNotInstalled) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v, and CI is set: the browser engines' tests must run", err)
		}
		t.Skip(err)
	}
}

// skipUnbuilt skips a test whose cell found no page bundle (a fresh clone: go tool task
// build makes it), except in CI.
func skipUnbuilt(t *testing.T, r measure.Result) {
	t.Helper()
	if strings.Contains(r.Failure, "go tool task build") && os.Getenv("CI") == "" {
		t.Skip(r.Failure)
	}
}

func kindOf(name string) headless.Kind {
	e, err := browser.New(name)
	if err != nil {
		panic(err)
	}
	return e.Browser()
}

// Each browser engine, each cell in a worker process with a browser of its own, gives the
// catalogue's values for a recursion and a loop kernel at small sizes, with the first call,
// samples, k and the browser's version; the wasm tiers report their compile and
// instantiate times apart. Each kernel's browser ports are checked against the catalogue
// in the page's tests (playground's TestPageIn*): here, a cell costs a browser's start.
func TestEnginesInWorkers(t *testing.T) {
	calls := []struct {
		kernel string
		args   map[string]int
	}{
		{"fib_rec", map[string]int{"n": 15}},
		{"test8", map[string]int{"large": 1_000}},
	}
	opts := measure.Options{Runs: 3, Warmup: 1, WarmupTime: 20 * time.Millisecond, MinSample: 2 * time.Millisecond}
	for _, name := range browser.Names() {
		t.Run(name, func(t *testing.T) {
			need(t, kindOf(name))
			for _, c := range calls {
				jobs, err := runner.Plan{Engines: []string{name}, Kernels: []string{c.kernel}, Args: c.args, Options: opts, Timeout: 2 * time.Minute}.Jobs()
				if err != nil || len(jobs) != 1 {
					t.Fatalf("plan: %v jobs, %v", len(jobs), err)
				}
				job := jobs[0]
				r, err := runner.Run(context.Background(), job, runner.Options{})
				if err != nil {
					t.Fatal(err)
				}
				skipUnbuilt(t, r)
				k, _ := kernels.Lookup(c.kernel)
				want := k.Expected(job.Args())
				if want == 0 {
					t.Fatalf("%s: the catalogue's value is 0: pick arguments that check something", job.Label())
				}
				if r.Failed() || r.Value != want || r.Expected != want || r.Runs != 3 || len(r.Samples) != 3 || r.Calls < 1 || r.Median <= 0 {
					t.Errorf("%s on %s: %+v; want the value %d from 3 samples", job.Label(), name, r, want)
				}
				if r.First <= 0 || r.Warmup != 1 {
					t.Errorf("%s on %s: first call %v, warm-up %d; want the first call timed and 1 warm-up call", job.Label(), name, r.First, r.Warmup)
				}
				browserName := map[headless.Kind]string{headless.Chromium: "Chromium ", headless.Firefox: "Firefox "}[kindOf(name)]
				if !strings.HasPrefix(r.Runtime, browserName) || !strings.Contains(r.Runtime, "performance.now() steps") {
					t.Errorf("%s on %s: runtime %q, want the browser's version and its timer's step", job.Label(), name, r.Runtime)
				}
				if strings.HasSuffix(name, "-wasm") && (r.Setup.Compile <= 0 || r.Setup.Instantiate <= 0) {
					t.Errorf("%s on %s: setup %+v, want compile and instantiate timed", job.Label(), name, r.Setup)
				}
			}
		})
	}
}

// A browser engine whose browser is missing is a cell that says what to install.
func TestEngineNotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for name, want := range map[string]string{
		browser.ChromiumJS:  "load failed: chromium not installed: apt-get install chromium",
		browser.FirefoxWasm: "load failed: firefox not installed: apt-get install firefox-esr",
	} {
		e, _ := browser.New(name)
		k, _ := kernels.Lookup("fib_it")
		r := measure.Measure(context.Background(), e, k, []int{10}, measure.Options{Runs: 1}, nil)
		if r.Failure != want {
			t.Errorf("%s: failure %q, want %q", name, r.Failure, want)
		}
	}
}

func TestNewUnknown(t *testing.T) {
	if _, err := browser.New("safari-wasm"); err == nil || !strings.Contains(err.Error(), "chromium-wasm, firefox-wasm, chromium-js, firefox-js") {
		t.Errorf("New(safari-wasm) = %v, want the valid names", err)
	}
}

// ack(3, 10) overflows the stack of Chromium's workers; the cell says so, as a failure
// of its own, with no time.
func TestStackOverflowIsACell(t *testing.T) {
	need(t, headless.Chromium)
	jobs, err := runner.Plan{Engines: []string{browser.ChromiumJS}, Kernels: []string{"ack"}, Args: map[string]int{"n": 3, "m": 13}, Options: measure.Options{Runs: 1}, Timeout: 2 * time.Minute}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.Run(context.Background(), jobs[0], runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	skipUnbuilt(t, r)
	if r.Failure != measure.FailureStackOverflow || len(r.Samples) != 0 {
		t.Errorf("ack(3, 13) on chromium-js: %+v; want %q and no samples", r, measure.FailureStackOverflow)
	}
}

// Each browser engine's warm-up execution, in a worker process with a browser of its own,
// times every call from the first inside the page: a series of the asked length, each
// time positive as the page's clock measured it (above the floor that Collect puts under
// a sample the clock saw as zero: fib_rec(18) is thousands of calls, a clock step or more),
// taken by performance.now() in the page's worker, with the worker's load of the kernel.
func TestWarmupSeries(t *testing.T) {
	for _, name := range browser.Names() {
		t.Run(name, func(t *testing.T) {
			need(t, kindOf(name))
			plan := runner.WarmupPlan{Engines: []string{name}, Kernel: "fib_rec", Args: map[string]int{"n": 18}, Executions: 1,
				Collection: warmup.Collection{Samples: 50, Group: 2}, Timeout: 2 * time.Minute}
			jobs, err := plan.Jobs()
			if err != nil {
				t.Fatal(err)
			}
			s, err := runner.RunWarmup(context.Background(), jobs[0], plan.Collection)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(s.Failure, "go tool task build") && os.Getenv("CI") == "" {
				t.Skip(s.Failure)
			}
			if s.Failure != "" || len(s.Times) != 50 || s.Group != 2 || s.Timer != browser.TimedInPage {
				t.Fatalf("%s: %+v; want 50 samples of 2 calls timed in the page", name, s)
			}
			for i, d := range s.Times {
				if d <= 1 {
					t.Fatalf("%s: sample %d took %v ns, want a positive time", name, i+1, d)
				}
			}
			if !strings.HasPrefix(s.Version, map[headless.Kind]string{headless.Chromium: "Chromium ", headless.Firefox: "Firefox "}[kindOf(name)]) {
				t.Errorf("%s: version %q, want the browser's", name, s.Version)
			}
			// The worker's load of the kernel comes with the series: a wasm tier compiles
			// and instantiates kernels.wasm; a JS tier has nothing to compile apart.
			if wasm := strings.HasSuffix(name, "-wasm"); wasm && (s.Setup.Compile <= 0 || s.Setup.Instantiate <= 0) || !wasm && s.Setup.Compile != 0 {
				t.Errorf("%s: setup %+v; want a compile and an instantiate time for a wasm tier, no compile for a JS one", name, s.Setup)
			}
		})
	}
}
