package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
)

func TestInputPlan(t *testing.T) {
	n := func(v int) *int { return &v }
	d := func(v time.Duration) *time.Duration { return &v }
	for _, c := range []struct {
		name    string
		in      Input
		opts    measure.Options
		args    map[string]int
		field   string // of the error, "" for none
		err     string
		execs   int           // the plan's executions, when not 0
		timeout time.Duration // the plan's timeout, when not 0
	}{
		{name: "absent: the table's defaults", in: Input{}, opts: measure.Options{Runs: measure.DefaultRuns, Warmup: measure.DefaultWarmup}},
		{name: "zero durations: none", in: Input{Runs: n(6), Warmup: n(0), MinSample: d(0), WarmupTime: d(0)}, opts: measure.Options{Runs: 6, Warmup: 0, MinSample: -1, WarmupTime: -1}},
		{name: "given", in: Input{Runs: n(3), Warmup: n(2), MinSample: d(time.Millisecond), WarmupTime: d(time.Second), Cold: true}, opts: measure.Options{Runs: 3, Warmup: 2, MinSample: time.Millisecond, WarmupTime: time.Second, Cold: true}},
		{name: "args as text", in: Input{Args: map[string]string{"n": "30", "fib_rec.n": "20"}}, opts: measure.Options{Runs: measure.DefaultRuns, Warmup: measure.DefaultWarmup}, args: map[string]int{"n": 30, "fib_rec.n": 20}},
		{name: "one kernel's args", in: Input{Kernels: []string{"ack"}, OneKernel: true, Args: map[string]string{"m": "3"}}, opts: measure.Options{Runs: measure.DefaultRuns, Warmup: measure.DefaultWarmup}, args: map[string]int{"ack.m": 3}},
		{name: "arg not an integer", in: Input{Args: map[string]string{"n": "ten"}}, field: "args.n", err: "n=ten: the value must be an integer"},
		{name: "runs zero", in: Input{Runs: n(0)}, field: "runs", err: "timed runs = 0 is out of range: allowed 1 to 100"},
		{name: "warm-up too many", in: Input{Warmup: n(101)}, field: "warmup", err: "allowed 0 (no warm-up) to 100"},
		{name: "sample too long", in: Input{MinSample: d(2 * time.Second)}, field: "min_sample", err: "minimum sample time = 2s is out of range: allowed 0 (one call per sample) to 1s"},
		{name: "negative warm-up time", in: Input{WarmupTime: d(-time.Millisecond)}, field: "warmup_time", err: "allowed 0 (the warm-up runs only) to 10s"},
		{name: "zero timeout", in: Input{Timeout: d(0)}, field: "timeout", err: "time limit per execution = 0s is out of range: allowed 1s to 1h0m0s"},
		{name: "timeout past the server's", in: Input{Timeout: d(time.Minute), MaxTimeout: 20 * time.Second}, field: "timeout", err: "time limit per execution = 1m0s is out of range: allowed 1s to 20s"},
		{name: "no executions", in: Input{Executions: n(0)}, field: "executions", err: "worker processes per cell = 0 is out of range: allowed 1 to 20"},
		{name: "executions given", in: Input{Executions: n(5)}, opts: measure.Options{Runs: measure.DefaultRuns, Warmup: measure.DefaultWarmup}, execs: 5},
		{name: "the server's timeout when absent", in: Input{MaxTimeout: 20 * time.Second}, opts: measure.Options{Runs: measure.DefaultRuns, Warmup: measure.DefaultWarmup}, timeout: 20 * time.Second},
		{name: "executions absent", in: Input{}, opts: measure.Options{Runs: measure.DefaultRuns, Warmup: measure.DefaultWarmup}, execs: DefaultExecutions},
	} {
		p, err := c.in.Plan()
		if c.field != "" {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want field %s and %q", c.name, err, c.field, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if c.timeout != 0 && p.Timeout != c.timeout {
			t.Errorf("%s: timeout %v, want %v", c.name, p.Timeout, c.timeout)
		}
		if c.execs != 0 && p.Executions != c.execs {
			t.Errorf("%s: %d executions, want %d", c.name, p.Executions, c.execs)
		}
		if p.Options != c.opts || len(p.Args) != len(c.args) {
			t.Errorf("%s: options %+v, args %v; want %+v, %v", c.name, p.Options, p.Args, c.opts, c.args)
		}
		for k, v := range c.args {
			if p.Args[k] != v {
				t.Errorf("%s: args %v, want %v", c.name, p.Args, c.args)
			}
		}
		// What Input makes, Plan.Jobs accepts: the same table checks both.
		if _, err := p.Jobs(); err != nil && !strings.Contains(c.name, "args") {
			t.Errorf("%s: Plan.Jobs refuses what Input made: %v", c.name, err)
		}
	}
}

// Every setting's default lies in its range, and the counts' ranges are the runner's.
func TestBoundsTable(t *testing.T) {
	b := Bounds
	for _, s := range []Setting{b.Runs, b.Warmup, b.WarmupTime, b.MinSample, b.Timeout, b.Executions} {
		if s.Default < s.Min || s.Default > s.Max || s.Field == "" || s.Flag == "" || s.What == "" {
			t.Errorf("setting %+v: default outside its range, or unnamed", s)
		}
	}
	if b.Runs.Max != MaxJobRuns || b.Warmup.Max != MaxJobWarmup || b.MinSample.Max != int64(MaxMinSample) || b.WarmupTime.Max != int64(MaxWarmupTime) || b.Executions.Max != MaxExecutions {
		t.Errorf("bounds %+v disagree with the runner's maxima", b)
	}
}
