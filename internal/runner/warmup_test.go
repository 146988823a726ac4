package runner

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/warmup"
)

// A warm-up study runs each execution in a fresh worker and returns every sample it asked
// for, analysed.
func TestWarmupPlanRuns(t *testing.T) {
	before := workersStarted.Load()
	p := WarmupPlan{Engines: []string{engine.Native}, Kernel: "fib_it", Args: map[string]int{"n": 30}, Executions: 2,
		Collection: warmup.Collection{Samples: 40, Group: 3}}
	var seen []int
	rep, err := p.Run(context.Background(), func(_ string, i int) { seen = append(seen, i) })
	if err != nil {
		t.Fatal(err)
	}
	if got := workersStarted.Load() - before; got != 2 {
		t.Errorf("%d workers started, want one per execution, 2", got)
	}
	if len(seen) != 2 || seen[0] != 0 || seen[1] != 1 {
		t.Errorf("progress for executions %v, want [0 1]", seen)
	}
	if rep.Label != "fib_it(30)" || len(rep.Engines) != 1 || rep.Method.Executions != 2 {
		t.Fatalf("report %q with %d engines, %d executions", rep.Label, len(rep.Engines), rep.Method.Executions)
	}
	e := rep.Engines[0]
	if e.Engine != engine.Native || len(e.Runs) != 2 || e.Pair == nil {
		t.Fatalf("engine result %+v", e)
	}
	for i, r := range e.Runs {
		if r.Failure != "" || r.Analysis == nil {
			t.Fatalf("run %d: failure %q, analysis error %q", i, r.Failure, r.Error)
		}
		if len(r.Times) != 40 || r.Group != 3 || r.Analysis.Samples != 40 || r.Stopped != "samples" {
			t.Errorf("run %d: %d samples of %d calls, stopped by %q; want 40 of 3, all", i, len(r.Times), r.Group, r.Stopped)
		}
		if r.Timer != engine.TimedByHost {
			t.Errorf("run %d timed by %q, want %q", i, r.Timer, engine.TimedByHost)
		}
	}
}

// The budget stops the samples short of the count asked for.
func TestWarmupBudgetStops(t *testing.T) {
	job := oneJob(t, engine.Native, "fib_rec", map[string]int{"n": 27}, measure.Defaults(), time.Minute)
	s, err := RunWarmup(context.Background(), job, warmup.Collection{Samples: warmup.MaxSamples, Budget: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if s.Failure != "" || s.Stopped != "budget" || len(s.Times) == 0 || len(s.Times) >= warmup.MaxSamples {
		t.Fatalf("failure %q, stopped by %q after %d samples; want the budget to stop it", s.Failure, s.Stopped, len(s.Times))
	}
}

func TestWarmupPlanRefuses(t *testing.T) {
	tests := []struct {
		name  string
		plan  WarmupPlan
		field string
	}{
		{"too many executions", WarmupPlan{Executions: MaxWarmupExecutions + 1}, "executions"},
		{"too few samples", WarmupPlan{Collection: warmup.Collection{Samples: 3}}, "collection"},
		{"a group of none", WarmupPlan{Collection: warmup.Collection{Group: -1}}, "collection"},
		{"unknown engine", WarmupPlan{Engines: []string{"nope"}}, "engine"},
		{"an engine twice", WarmupPlan{Engines: []string{engine.Native, engine.Native}}, "engine"},
		{"unknown kernel", WarmupPlan{Kernel: "nope"}, "kernel"},
		{"argument out of range", WarmupPlan{Args: map[string]int{"n": 1000}}, "args.n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := workersStarted.Load()
			_, err := tt.plan.Run(context.Background(), nil)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("error %v, want a FieldError on %q", err, tt.field)
			}
			if workersStarted.Load() != before {
				t.Error("a refused plan started a worker")
			}
		})
	}
}
