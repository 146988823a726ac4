//go:build linux

package runner

import (
	"context"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/sandbox"
)

// Every worker that runs a user kernel is fenced before the kernel runs, with every layer
// this machine offers, and still computes the kernel's value (the noise meter included).
func TestCustomWorkerFenced(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	// Builds of user kernels wait on the go command more than they compute: the
	// custom tests run side by side (separate build folders, one shared Go cache).
	t.Parallel()
	offered := sandbox.Probe()
	t.Logf("this machine offers: %s", offered)
	k := buildCustom(t, newCustomBuilder(t), customSieve)
	jobs, err := Plan{Custom: k, Args: map[string]int{"n": 100_000}, Options: measure.Options{Runs: 2, Warmup: 1}, Timeout: time.Minute}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	for _, job := range jobs {
		var fences []sandbox.Report
		r, err := Run(context.Background(), job, Options{OnFence: func(f sandbox.Report) { fences = append(fences, f) }})
		if err != nil {
			t.Fatal(err)
		}
		if r.Failed() || r.Value != 9592 {
			t.Errorf("%s: %+v", job.Engine(), r)
		}
		if len(fences) != job.Executions() {
			t.Fatalf("%s: the workers reported %d fences, want one from each of its %d", job.Engine(), len(fences), job.Executions())
		}
		f := fences[0]
		t.Logf("%s: %s", job.Engine(), f)
		if f.Namespaces != offered.Namespaces || f.OwnProc != offered.OwnProc || f.NProc != offered.NProc ||
			f.Seccomp != offered.Seccomp || (f.Landlock > 0) != (offered.Landlock > 0) || f.NoNewPrivs != offered.NoNewPrivs {
			t.Errorf("%s: in force %s, offered %s", job.Engine(), f, offered)
		}
		if r.Noise == nil {
			t.Errorf("%s: no noise reading: the fence must leave /proc readable (its own, in a PID namespace of its own)", job.Engine())
		}
	}
}
