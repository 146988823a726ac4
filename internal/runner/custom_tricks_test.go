package runner

import (
	"context"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
)

// A user kernel that recurses without end is harmless on every server engine: the run
// fails on its own (a stack overflow, the worker's crash or its time limit), is told as a
// failure, and the next run works.
func TestCustomRecursionBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	b := newCustomBuilder(t)
	bomb := buildCustom(t, b, "package kernel\n\nfunc Deep(n int) int64 {\n\treturn Deep(n+1) + 1\n}\n")
	// wazero's compiler grows the stack until the limit (2 s, a core busy all along); the
	// interpreters overflow theirs sooner, or fail at the limit on a busy machine.
	jobs, err := Plan{Custom: bomb, Args: map[string]int{"n": 1}, Options: measure.Options{Runs: 1}, Timeout: 2 * time.Second}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	for _, job := range jobs {
		r, err := Run(context.Background(), job, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Failed() {
			t.Errorf("Deep on %s: %+v, want a failure", job.Engine(), r)
		}
		t.Logf("Deep on %s: %s", job.Engine(), r.Failure)
	}
	sieve := buildCustom(t, b, customSieve)
	jobs, err = Plan{Custom: sieve, Args: map[string]int{"n": 1000}, Options: measure.Options{Runs: 1}, Timeout: time.Minute}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	for _, job := range jobs {
		if r, err := Run(context.Background(), job, Options{}); err != nil || r.Failed() || r.Value != 168 {
			t.Errorf("a run after the bomb on %s: %+v, %v", job.Engine(), r, err)
		}
	}
}
