package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
)

// Environment variables that make this test binary, when it runs as a worker, fail in
// real ways: a small stack limit (so a native recursion really overflows) or a panic.
const (
	testMaxStackEnv = "WASMGAP_TEST_MAX_STACK"
	testCrashEnv    = "WASMGAP_TEST_CRASH"
	testLongLineEnv = "WASMGAP_TEST_LONG_LINE"
)

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		if n, err := strconv.Atoi(os.Getenv(testMaxStackEnv)); err == nil {
			debug.SetMaxStack(n)
		}
		if os.Getenv(testLongLineEnv) == "1" {
			writeLongLine()
		}
		if os.Getenv(testCrashEnv) == "1" {
			var m map[string]int
			m["crash"]++
		}
	}
	ServeWorkerIfRequested()
	os.Exit(m.Run())
}

// oneJob returns the one job of a plan of one kernel on one engine.
func oneJob(t testing.TB, engineName, kernel string, args map[string]int, opts measure.Options, timeout time.Duration) Job {
	t.Helper()
	jobs, err := Plan{Engines: []string{engineName}, Kernels: []string{kernel}, Args: args, Options: opts, Timeout: timeout}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 {
		t.Fatalf("%d jobs, want 1", len(jobs))
	}
	return jobs[0]
}

func TestRunNative(t *testing.T) {
	var progress []Progress
	r, err := Run(context.Background(), oneJob(t, "native", "fib_it", map[string]int{"n": 40}, measure.Defaults(), 0), Options{
		OnProgress: func(p Progress) { progress = append(progress, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed() || r.Value != 102_334_155 || r.Expected != 102_334_155 {
		t.Fatalf("fib_it(40) = %+v", r)
	}
	// The default runs spread over the default executions, each a worker of its own.
	n := measure.DefaultRuns
	if r.Runs != n || r.Warmup != 1 || len(r.Samples) != n || r.Median <= 0 || r.Calls <= 1 || !r.CI.Valid() || len(r.Executions) != DefaultExecutions {
		t.Errorf("runs %d warm-up %d samples %d median %v k %d interval %+v executions %d; want %d runs, 1, k > 1, an interval and %d executions",
			r.Runs, r.Warmup, len(r.Samples), r.Median, r.Calls, r.CI, len(r.Executions), n, DefaultExecutions)
	}
	for i, e := range r.Executions {
		// How large k is depends on this machine's speed; that k calls fill the sample does
		// not: a sample lasting under half the minimum starts the samples over with a larger k.
		if sample := time.Duration(float64(e.Calls) * e.Median); e.Runs != runsOfExecution(i, n, DefaultExecutions) || sample < measure.DefaultMinSample/2 {
			t.Errorf("execution %d: %d runs, k = %d calls of %.1f ns make a %v sample; want %d runs, not under half the %v minimum", i, e.Runs, e.Calls, e.Median, sample, runsOfExecution(i, n, DefaultExecutions), measure.DefaultMinSample)
		}
	}
	each := runsOfExecution(DefaultExecutions-1, n, DefaultExecutions)
	last := Progress{Phase: "run", Done: each, Total: each, Execution: DefaultExecutions, Executions: DefaultExecutions}
	if len(progress) == 0 || progress[len(progress)-1] != last {
		t.Errorf("progress = %v, want it to end with %+v", progress, last)
	}
}

// checkStillWorks runs a normal job after a failure: the caller is unharmed.
func checkStillWorks(t *testing.T) {
	t.Helper()
	r, err := Run(context.Background(), oneJob(t, "native", "ack", map[string]int{"n": 2, "m": 3}, optsQuick, 0), Options{})
	if err != nil || r.Failed() || r.Value != 9 {
		t.Fatalf("a normal job after a failure: %+v, %v", r, err)
	}
}

var optsQuick = measure.Options{Runs: 2, Warmup: 1}

func TestRunTimeout(t *testing.T) {
	const limit = 2 * time.Second
	// fib_rec(60) would take hours: that Run returns at all is the limit's doing (no
	// time is asserted: a busy machine may take longer to kill and reap the worker).
	r, err := Run(context.Background(), oneJob(t, "native", "fib_rec", map[string]int{"n": 60}, measure.Defaults(), limit), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Failure != "timed out after 2s" || r.Median != 0 {
		t.Errorf("fib_rec(60) with a 2s limit: %+v", r)
	}
	checkStillWorks(t)
}

func TestRunStackOverflow(t *testing.T) {
	// ack(3, 10) recurses about 8,000 calls deep: far past a 64 KiB stack. (With Go's
	// default 1 GB limit no kernel overflows natively in any practical time.)
	t.Setenv(testMaxStackEnv, strconv.Itoa(64<<10))
	r, err := Run(context.Background(), oneJob(t, "native", "ack", map[string]int{"n": 3, "m": 10}, measure.Defaults(), 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Failure != "stack overflow" || r.Kernel != "ack" || r.Engine != "native" {
		t.Errorf("ack(3, 10) on a 64 KiB stack: %+v", r)
	}
	checkStillWorks(t)
}

func TestRunCrash(t *testing.T) {
	t.Setenv(testCrashEnv, "1")
	r, err := Run(context.Background(), oneJob(t, "native", "fib_it", map[string]int{"n": 10}, measure.Defaults(), 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Failure != "crashed: panic: assignment to entry in nil map" {
		t.Errorf("crashing worker: Failure %q", r.Failure)
	}
	os.Unsetenv(testCrashEnv)
	checkStillWorks(t)
}

func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{}, 1)
	go func() {
		<-started
		time.Sleep(200 * time.Millisecond)
		cancel()
	}()
	// fib_rec(60) would take hours, and its limit is the default 30 s: that Run returns
	// context.Canceled is the cancellation's doing.
	_, err := Run(ctx, oneJob(t, "native", "fib_rec", map[string]int{"n": 60}, measure.Defaults(), 0), Options{
		OnProgress: func(Progress) {
			select {
			case started <- struct{}{}:
			default:
			}
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: err = %v, want context.Canceled", err)
	}
	checkStillWorks(t)
}

// A job not made by Plan.Jobs starts no worker.
func TestRunRejectsUncheckedJob(t *testing.T) {
	before := workersStarted.Load()
	if _, err := Run(context.Background(), Job{}, Options{}); err == nil || !strings.Contains(err.Error(), "Plan.Jobs") {
		t.Errorf("Run(Job{}) error = %v, want one naming Plan.Jobs", err)
	}
	if n := workersStarted.Load() - before; n != 0 {
		t.Errorf("%d workers started for an unchecked job, want none", n)
	}
}

func TestCrashReason(t *testing.T) {
	for _, c := range []struct {
		stderr string
		err    error
		want   string
	}{
		{"runtime: goroutine stack exceeds 1000000000-byte limit\nruntime: sp=0xc0200e0390\nfatal error: stack overflow\n\nruntime stack:\n", nil, "stack overflow"},
		{"panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/x/main.go:5 +0x18\nexit status 2\n", nil, "crashed: panic: boom"},
		{"fatal error: runtime: out of memory\n\nruntime stack:\nruntime.throw()\n", nil, "crashed: fatal error: runtime: out of memory"},
		{"wasmgap worker: read job: EOF\n", nil, "crashed: wasmgap worker: read job: EOF"},
		{"", errors.New("signal: killed"), "crashed: signal: killed"},
		{"", nil, "crashed: worker exited without a result"},
	} {
		if got := crashReason(c.stderr, c.err); got != c.want {
			t.Errorf("crashReason(%q) = %q, want %q", c.stderr, got, c.want)
		}
	}
}

func ExampleRun() {
	jobs, err := Plan{Engines: []string{"native"}, Kernels: []string{"ack"}, Args: map[string]int{"m": 5}, Options: measure.Defaults()}.Jobs()
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := Run(context.Background(), jobs[0], Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Label(), "=", r.Value, "failed:", r.Failed())
	_, err = Plan{Engines: []string{"native"}, Kernels: []string{"ack"}, Args: map[string]int{"m": 21}, Options: measure.Defaults()}.Jobs()
	fmt.Println(err)
	// Output:
	// ack(3, 5) = 253 failed: false
	// ack: m = 21 is out of range: allowed 0 to 20
}
