package runner

import (
	"context"
	"errors"
	"strings"
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

// A study's settings are checked once, against the table of bounds: nil is the default, a
// zero budget none, anything out of range an error naming the setting.
func TestWarmupSettings(t *testing.T) {
	n := func(v int) *int { return &v }
	d := func(v time.Duration) *time.Duration { return &v }
	execs, c, timeout, err := WarmupSettings{}.Check()
	if err != nil || execs != DefaultWarmupExecutions || c.WithDefaults() != (warmup.Collection{Samples: warmup.DefaultSamples, Group: 1, Budget: warmup.DefaultBudget}) || timeout != 0 {
		t.Errorf("defaults: %d %+v %v %v", execs, c, timeout, err)
	}
	if _, c, _, err := (WarmupSettings{Budget: d(0)}).Check(); err != nil || c.Budget >= 0 || WarmupTimeout(c) != DefaultTimeout {
		t.Errorf("budget 0: %+v %v, want none", c, err)
	}
	for _, tt := range []struct {
		in    WarmupSettings
		field string
	}{
		{WarmupSettings{Executions: n(MaxWarmupExecutions + 1)}, "executions"},
		{WarmupSettings{Calls: n(3)}, "calls"},
		{WarmupSettings{Group: n(0)}, "group"},
		{WarmupSettings{Budget: d(-time.Second)}, "budget"},
		{WarmupSettings{Budget: d(warmup.MaxBudget + time.Second)}, "budget"},
		{WarmupSettings{Timeout: d(0)}, "timeout"},
	} {
		_, _, _, err := tt.in.Check()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(err.Error(), "out of range: allowed") {
			t.Errorf("%+v: %v, want an error on %s saying what is allowed", tt.in, err, tt.field)
		}
	}
}
