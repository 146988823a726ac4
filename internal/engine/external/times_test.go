package external

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/engine/driver"
	"github.com/wasmgap/wasmgap/kernels"
)

// withTimes are the drivers that serve the per-call mode ("times"); the others answer
// that they do not, and the engine falls back to one request per sample.
var withTimes = []string{Java, JavaInt, NodeJS, NodeJSJitless, Python, PyPy, Lua, LuaJIT, LuaJITInterp, PHP, PHPJIT, NodeWasm, C, CWasm}

// Every driver gives a warm-up series: samples × group calls, each sample timed inside
// the runtime, every value checked; back to back where the driver serves "times".
func TestDriversTimeEveryCall(t *testing.T) {
	k, err := kernels.Lookup("fib_rec")
	if err != nil {
		t.Fatal(err)
	}
	args := []int{10}
	for _, name := range append(Names(), NodeWasm) {
		t.Run(name, func(t *testing.T) {
			p := start(t, name)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := p.CallTimes(ctx, k, args, 5, 2)
			if served := slices.Contains(withTimes, name); served != (err == nil) {
				t.Fatalf("CallTimes: %v (the driver serves \"times\": %v)", err, served)
			}
			if err != nil && !errors.Is(err, driver.ErrNoTimes) {
				t.Fatalf("CallTimes of a driver without the mode: %v, want ErrNoTimes", err)
			}
			e := driver.NewEngine(name, func(context.Context) (*driver.Process, error) { return p, nil })
			if _, err := e.Load(ctx); err != nil {
				t.Fatal(err)
			}
			defer e.Close(ctx)
			var ct engine.CallTimer = e
			tc, err := ct.RunTimedCalls(ctx, k, args, 5, 2)
			if err != nil {
				t.Fatal(err)
			}
			if tc.First != 55 || tc.Sum != 550 || len(tc.Times) != 5 || tc.Setup != nil {
				t.Errorf("first %d, sum %d, %d times, setup %v; want 55, 550, 5 and none (Load's)", tc.First, tc.Sum, len(tc.Times), tc.Setup)
			}
			want := engine.TimedPerRequest
			if slices.Contains(withTimes, name) {
				want = engine.TimedPerCall
			}
			if tc.How != want {
				t.Errorf("timed %q, want %q", tc.How, want)
			}
		})
	}
}

// A "times" request is checked as any other: its samples, its group, its arguments.
func TestDriversCheckTimes(t *testing.T) {
	for _, name := range []string{Java, NodeJS, Python, Lua, PHP, C, NodeWasm} {
		t.Run(name, func(t *testing.T) {
			p := start(t, name)
			ctx := context.Background()
			for _, c := range []struct{ line, want string }{
				{"times fib_rec 0 1 10", `samples "0" is not allowed`},
				{"times fib_rec 1001 1 10", `samples "1001" is not allowed`},
				{"times fib_rec 2 0 10", `reps "0" is not allowed`},
				{"times fib_rec 2 1 999", "out of range"},
				{"times nope 2 1 10", `unknown kernel "nope"`},
				{"times fib_rec 2 1", "too few fields"},
			} {
				_, err := p.Request(ctx, c.line, c.line)
				var de *driver.DriverError
				if !errors.As(err, &de) || !strings.Contains(de.Message, c.want) {
					t.Errorf("%q: %v, want an error answer that says %q", c.line, err, c.want)
				}
			}
		})
	}
}
