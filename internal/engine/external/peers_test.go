package external

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/engine/enginetest"
	"github.com/wasmgap/wasmgap/kernels"
)

// cacheDir is shared by the tests, so that each driver is built once per run.
var cacheDir string

func TestMain(m *testing.M) {
	serveOrphanIfRequested()
	dir, err := os.MkdirTemp("", "peers-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// start starts a peer for a test, skipping the test only when its runtime is missing, and
// failing it then too when PEERS_REQUIRED=1 (set it where every runtime is installed, as in CI).
func start(t testing.TB, name string) *Process {
	t.Helper()
	return startWith(t, name, Options{CacheDir: cacheDir})
}

// interruptible are Options under which every driver, c-wasm's too, can be stopped mid-call.
var interruptible = Options{InterruptibleWasm: true}

func startWith(t testing.TB, name string, opts Options) *Process {
	t.Helper()
	opts.CacheDir = cacheDir
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := Start(ctx, name, opts)
	if name == NodeWasm && err != nil && strings.Contains(err.Error(), "go tool task wasm") {
		t.Skipf("%v", err) // kernels.wasm is not built into this test binary
	}
	if errors.Is(err, ErrNotInstalled) {
		if os.Getenv("PEERS_REQUIRED") == "1" {
			t.Fatalf("PEERS_REQUIRED=1 and %v", err)
		}
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatalf("Start(%s): %v", name, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// smallArgs are the engines' shared small arguments for every kernel.
var smallArgs = enginetest.SmallArgs

// drivers are every driver the package starts: the peers and node-wasm.
var drivers = append(Names(), NodeWasms()...)

func TestEveryKernelEveryPeer(t *testing.T) {
	for _, name := range drivers {
		t.Run(name, func(t *testing.T) {
			p := start(t, name)
			t.Logf("%s: %s %s, setup %+v", name, p.Language, p.Runtime, p.Setup)
			ctx := context.Background()
			for _, k := range kernels.Every() {
				if engine.Applies(name, k) != nil {
					continue // host_call: node-wasm's alone
				}
				cases, ok := smallArgs[k.Name]
				if !ok {
					t.Fatalf("no test arguments for kernel %s", k.Name)
				}
				for _, args := range cases {
					want := k.Expected(args)
					for _, reps := range []int{1, 3} {
						r, err := p.Call(ctx, k.Name, reps, args)
						if err != nil {
							t.Fatalf("%s ×%d: %v", k.Label(args), reps, err)
						}
						if r.First != want {
							t.Errorf("%s ×%d: first = %d, want %d", k.Label(args), reps, r.First, want)
						}
						if wantSum := int64(reps) * want; r.Sum != wantSum {
							t.Errorf("%s ×%d: sum = %d, want %d", k.Label(args), reps, r.Sum, wantSum)
						}
						if r.Elapsed < 0 {
							t.Errorf("%s ×%d: elapsed = %v", k.Label(args), reps, r.Elapsed)
						}
					}
				}
			}
		})
	}
}

// TestDriverChecksRequests sends malformed requests as they are, and arguments just
// outside every parameter's catalogue range: each driver must answer an error that says
// what was wrong, and stay usable.
func TestDriverChecksRequests(t *testing.T) {
	type bad struct{ line, want string }
	cases := []bad{
		{"nope 1 1", `unknown kernel "nope"`},
		{"fib_it 0 10", `reps "0" is not allowed`},
		{"fib_it -1 10", `reps "-1" is not allowed`},
		{"fib_it x 10", `reps "x" is not allowed`},
		{"fib_it 1000000001 10", `reps "1000000001" is not allowed`},
		{"fib_it 1", "too few fields"},
		{"fib_it 1 2 3 4", "too many fields"},
		{"fib_it 1 2 3", "fib_it takes 1 arguments, got 2"},
		{"ack 1 3", "ack takes 2 arguments, got 1"},
		{"fib_it 1 ten", `fib_it: n = "ten" is not an integer`},
		{"fib_it 1 1.5", `fib_it: n = "1.5" is not an integer`},
		{"", "empty request"},
	}
	for _, k := range kernels.All() {
		for i, param := range k.Params {
			for _, v := range []int{param.Min - 1, param.Max + 1} {
				args := k.Defaults()
				args[i] = v
				fields := []string{k.Name, "1"}
				for _, a := range args {
					fields = append(fields, fmt.Sprint(a))
				}
				cases = append(cases, bad{strings.Join(fields, " "),
					fmt.Sprintf(`%s: %s = "%d" is out of range: allowed %d to %d`, k.Name, param.Name, v, param.Min, param.Max)})
			}
		}
	}
	for _, name := range drivers {
		t.Run(name, func(t *testing.T) {
			p := start(t, name)
			ctx := context.Background()
			for _, c := range cases {
				_, err := p.Request(ctx, c.line, c.line)
				var de *DriverError
				if !errors.As(err, &de) {
					t.Errorf("%q: err = %v, want a DriverError", c.line, err)
					continue
				}
				if !strings.Contains(de.Message, c.want) {
					t.Errorf("%q: message %q, want it to contain %q", c.line, de.Message, c.want)
				}
			}
			if r, err := p.Call(ctx, "fib_it", 1, []int{10}); err != nil || r.First != 55 {
				t.Errorf("after the errors, fib_it(10) = %+v, %v; want 55", r, err)
			}
		})
	}
}

// TestCallChecksArguments: Call refuses what the catalogue does not allow before it asks
// the driver.
func TestCallChecksArguments(t *testing.T) {
	p := start(t, NodeJS)
	ctx := context.Background()
	for _, c := range []struct {
		kernel string
		reps   int
		args   []int
		want   string
	}{
		{"nope", 1, []int{1}, `unknown kernel "nope"`},
		{"fib_it", 1, []int{93}, "n = 93 is out of range: allowed 0 to 92"},
		{"ack", 1, []int{3}, "ack takes 2 arguments (n, m), got 1"},
		{"fib_it", 0, []int{10}, "reps = 0 is out of range: allowed 1 to 1000000000"},
	} {
		_, err := p.Call(ctx, c.kernel, c.reps, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Call(%s, %d, %v) = %v, want an error containing %q", c.kernel, c.reps, c.args, err, c.want)
		}
	}
}

// TestTimeoutKillsDriver: a call that outlives its context kills the driver, and the
// Process says so on every later call.
func TestTimeoutKillsDriver(t *testing.T) {
	for _, name := range drivers {
		t.Run(name, func(t *testing.T) {
			p := startWith(t, name, interruptible)
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, err := p.Call(ctx, "fib_rec", 1, []int{60})
			if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrExited) {
				t.Fatalf("fib_rec(60) with a 200ms deadline: err = %v, want DeadlineExceeded and ErrExited", err)
			}
			_, err = p.Call(context.Background(), "fib_it", 1, []int{10})
			if !errors.Is(err, ErrExited) {
				t.Errorf("call after the kill: err = %v, want ErrExited", err)
			}
		})
	}
}

// TestKilledMidRun: a driver killed from outside during a call gives a clear error.
func TestKilledMidRun(t *testing.T) {
	for _, name := range drivers {
		t.Run(name, func(t *testing.T) {
			p := startWith(t, name, interruptible)
			go func() {
				time.Sleep(200 * time.Millisecond)
				p.Kill()
			}()
			_, err := p.Call(context.Background(), "fib_rec", 1, []int{60})
			if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "fib_rec(60)") {
				t.Fatalf("err = %v, want ErrExited naming the call", err)
			}
			t.Log(err)
		})
	}
}

func TestNotInstalled(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	opts := Options{CacheDir: t.TempDir(), Commands: map[string]string{}}
	for _, program := range []string{"gcc", "clang", "javac", "java", "node", "php", "python3", "pypy3", "lua5.4", "luajit"} {
		opts.Commands[program] = missing
	}
	for _, name := range drivers {
		_, err := Start(context.Background(), name, opts)
		if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "not installed: apt-get install ") {
			t.Errorf("Start(%s) with its programs missing: err = %v, want ErrNotInstalled with an install hint", name, err)
		}
	}
}

// TestToolchainPartMissing: a compiler that runs but lacks a part of its toolchain (clang
// without wasi-libc) is ErrNotInstalled too, with the compiler's complaint and the hint.
func TestToolchainPartMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fake-clang")
	script := "#!/bin/sh\necho \"kernels.c:10:10: fatal error: 'errno.h' file not found\" >&2\nexit 1\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), CWasm, Options{CacheDir: t.TempDir(), Commands: map[string]string{"clang": path}})
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "'errno.h' file not found") || !strings.Contains(err.Error(), "wasi-libc") {
		t.Errorf("err = %v, want ErrNotInstalled quoting clang and naming wasi-libc", err)
	}
}

func TestUnknownPeer(t *testing.T) {
	_, err := Start(context.Background(), "cobol", Options{CacheDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), `unknown peer "cobol": valid peers are c, c-wasm, java, java-int, node-js, node-js-jitless, php, php-jit, python, pypy, lua, luajit, luajit-interp, and node-wasm, node-wasm-opt, node-wasm-liftoff, node-wasm-turbofan`) {
		t.Errorf("err = %v", err)
	}
}

// fakeDriver returns Options whose php is a shell script: the tests of the protocol's
// failures use it in place of a real driver.
func fakeDriver(t *testing.T, script string) Options {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fake-php")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return Options{CacheDir: t.TempDir(), Commands: map[string]string{"php": path}}
}

func TestProtocolFailures(t *testing.T) {
	ctx := context.Background()
	t.Run("no ready line", func(t *testing.T) {
		_, err := Start(ctx, PHP, fakeDriver(t, "echo hello\n"))
		if err == nil || !strings.Contains(err.Error(), `first line is "hello"`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("exits at once", func(t *testing.T) {
		_, err := Start(ctx, PHP, fakeDriver(t, "echo oops >&2\nexit 3\n"))
		if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "stderr: oops") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("malformed answer", func(t *testing.T) {
		p, err := Start(ctx, PHP, fakeDriver(t, "echo ready fake 1\nread line\necho ok 1 2\necho more\necho and more\nsleep 60\n"))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		_, err = p.Call(ctx, "fib_it", 1, []int{1})
		if err == nil || !strings.Contains(err.Error(), `malformed answer "ok 1 2"`) {
			t.Errorf("err = %v", err)
		}
		if _, err := p.Call(ctx, "fib_it", 1, []int{1}); !errors.Is(err, ErrExited) {
			t.Errorf("call after a malformed answer: err = %v, want ErrExited", err)
		}
		// The driver's shell and its sleep are gone, so Close has nothing to wait for.
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	t.Run("segfault", func(t *testing.T) {
		p, err := Start(ctx, PHP, fakeDriver(t, "echo ready fake 1\nread line\nkill -SEGV $$\n"))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		_, err = p.Call(ctx, "fib_it", 1, []int{1})
		if !errors.Is(err, ErrStackOverflow) || !errors.Is(err, ErrExited) {
			t.Errorf("err = %v, want ErrStackOverflow and ErrExited", err)
		}
	})
}

func TestStackOverflowFromDriver(t *testing.T) {
	err := error(&DriverError{Peer: "java", Message: "stack overflow: ack exhausted the thread's stack"})
	if !errors.Is(err, ErrStackOverflow) {
		t.Errorf("%v is not ErrStackOverflow", err)
	}
	if errors.Is(&DriverError{Peer: "c", Message: `unknown kernel "x"`}, ErrStackOverflow) {
		t.Error("an unknown kernel is not a stack overflow")
	}
}

// TestClose: a closed Process refuses calls, and closing twice is harmless.
func TestClose(t *testing.T) {
	p := start(t, C)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Call(context.Background(), "fib_it", 1, []int{10}); !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "closed") {
		t.Errorf("call after Close: err = %v, want ErrExited saying it was closed", err)
	}
}

func TestNames(t *testing.T) {
	if got := Names(); !slices.Equal(got, []string{"c", "c-wasm", "java", "java-int", "node-js", "node-js-jitless", "php", "php-jit", "python", "pypy", "lua", "luajit", "luajit-interp"}) {
		t.Errorf("Names() = %v", got)
	}
}

// BenchmarkFibRec30 runs fib_rec(30) once per iteration on every installed peer, after one
// warm-up call, and reports the driver's own time per call as its median over the
// iterations (run with -benchtime=5x for the median of 5).
func BenchmarkFibRec30(b *testing.B) {
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			p := start(b, name)
			ctx := context.Background()
			if _, err := p.Call(ctx, "fib_rec", 1, []int{30}); err != nil {
				b.Fatal(err)
			}
			var times []time.Duration
			b.ResetTimer()
			for b.Loop() {
				r, err := p.Call(ctx, "fib_rec", 1, []int{30})
				if err != nil {
					b.Fatal(err)
				}
				if r.First != 832040 {
					b.Fatalf("fib_rec(30) = %d, want 832040", r.First)
				}
				times = append(times, r.Elapsed)
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "median-ns/call")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// TestStackOverflowCaught: V8's default stack is far shallower than ack(3, 20) needs, so
// node-js reports the overflow at once, and its driver serves the next call.
func TestStackOverflowCaught(t *testing.T) {
	p := start(t, NodeJS)
	ctx := context.Background()
	_, err := p.Call(ctx, "ack", 1, []int{3, 20})
	if !errors.Is(err, ErrStackOverflow) {
		t.Fatalf("ack(3, 20): err = %v, want ErrStackOverflow", err)
	}
	if r, err := p.Call(ctx, "ack", 1, []int{2, 3}); err != nil || r.First != 9 {
		t.Errorf("after the overflow, ack(2, 3) = %+v, %v; want 9", r, err)
	}
}

// TestBuildCached: the second Start of a peer finds its driver in the cache.
func TestBuildCached(t *testing.T) {
	for _, name := range []string{C, CWasm, Java} {
		t.Run(name, func(t *testing.T) {
			start(t, name).Close() // built here, or by an earlier test
			p := start(t, name)
			if !p.Setup.Cached || p.Setup.Build != 0 {
				t.Errorf("second Start: setup %+v, want Cached and no build time", p.Setup)
			}
			if name == CWasm && p.Setup.Compile <= 0 {
				t.Errorf("c-wasm setup %+v: want wazero's compile time", p.Setup)
			}
			if p.Setup.Start <= 0 {
				t.Errorf("setup %+v: want a start time", p.Setup)
			}
		})
	}
}
