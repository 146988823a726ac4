package runner

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/wasmgap/wasmgap/internal/custom"
	"github.com/wasmgap/wasmgap/internal/explain"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/warmup"
)

// Setting is one number a person sets for a run, with its default and its range: a count,
// or a duration in nanoseconds. Where Min is 0 and Zero is set, zero means "none" in
// Zero's words (no warm-up time, one call per sample).
type Setting struct {
	// Field names the setting in errors (*FieldError) and the page's API; Flag is the
	// CLI's flag for it.
	Field string `json:"field"`
	Flag  string `json:"-"`
	// What says what the setting is, in an error's words ("minimum sample time").
	What string `json:"-"`
	// Duration is true for a duration in nanoseconds, false for a count.
	Duration bool  `json:"duration,omitempty"`
	Default  int64 `json:"default"`
	Min      int64 `json:"min"`
	Max      int64 `json:"max"`
	// Zero says what 0 means when it is not simply the smallest count ("one call per
	// sample"); empty otherwise.
	Zero string `json:"zero,omitempty"`
}

// Settings are the bounds of every run setting, whoever asks (the CLI's flags, the page's
// API, the page itself through the catalogue GET /api/kernels serves): the one table.
type Settings struct {
	Runs       Setting `json:"runs"`
	Warmup     Setting `json:"warmup"`
	WarmupTime Setting `json:"warmup_time"`
	MinSample  Setting `json:"min_sample"`
	Timeout    Setting `json:"timeout"`
	Executions Setting `json:"executions"`
	// The settings of a warm-up study (WarmupSettings): its fresh processes per engine,
	// the samples of each, the calls of a sample and the time after which the samples
	// stop; its time limit is Timeout's.
	WarmupExecutions Setting `json:"warmup_executions"`
	Calls            Setting `json:"calls"`
	Group            Setting `json:"group"`
	Budget           Setting `json:"budget"`
	// ExplainWarmup and ExplainProfile are explain's: how long a JIT runs the kernel
	// before its code is read, and how long a profiled run lasts.
	ExplainWarmup  Setting `json:"explain_warmup"`
	ExplainProfile Setting `json:"explain_profile"`
}

// The longest minimum warm-up and sample times (Bounds).
const (
	MaxWarmupTime = 10 * time.Second
	MaxMinSample  = time.Second
)

// Bounds are the run settings' defaults and ranges. A hundred samples put the median's
// interval within a few percent; more would only hold a shared server longer. A sample of
// a second is testing.B's whole default run; longer ones only make a cell outlast its
// time limit.
var Bounds = Settings{
	Runs:       Setting{Field: "runs", Flag: "runs", What: "timed runs", Default: measure.DefaultRuns, Min: 1, Max: MaxJobRuns},
	Warmup:     Setting{Field: "warmup", Flag: "warmup", What: "warm-up runs", Default: measure.DefaultWarmup, Min: 0, Max: MaxJobWarmup, Zero: "no warm-up"},
	WarmupTime: Setting{Field: "warmup_time", Flag: "warmup-time", What: "minimum warm-up time", Duration: true, Default: int64(measure.DefaultWarmupTime), Min: 0, Max: int64(MaxWarmupTime), Zero: "the warm-up runs only"},
	MinSample:  Setting{Field: "min_sample", Flag: "min-sample", What: "minimum sample time", Duration: true, Default: int64(measure.DefaultMinSample), Min: 0, Max: int64(MaxMinSample), Zero: "one call per sample"},
	Timeout:    Setting{Field: "timeout", Flag: "timeout", What: "time limit per execution", Duration: true, Default: int64(DefaultTimeout), Min: int64(time.Second), Max: int64(time.Hour)},
	Executions: Setting{Field: "executions", Flag: "executions", What: "worker processes per cell", Default: DefaultExecutions, Min: 1, Max: MaxExecutions},

	WarmupExecutions: Setting{Field: "executions", Flag: "executions", What: "fresh processes per engine", Default: DefaultWarmupExecutions, Min: 1, Max: MaxWarmupExecutions},
	Calls:            Setting{Field: "calls", Flag: "calls", What: "samples per execution", Default: warmup.DefaultSamples, Min: warmup.MinSamples, Max: warmup.MaxSamples},
	Group:            Setting{Field: "group", Flag: "group", What: "calls per sample", Default: 1, Min: 1, Max: warmup.MaxGroup},
	Budget:           Setting{Field: "budget", Flag: "budget", What: "time per execution after which the samples stop", Duration: true, Default: int64(warmup.DefaultBudget), Min: 0, Max: int64(warmup.MaxBudget), Zero: "none: the samples run to their count, within the time limit"},

	ExplainWarmup:  Setting{Field: "explain_warmup", Flag: "warmup-time", What: "explain's warm-up time", Duration: true, Default: int64(measure.DefaultWarmupTime), Min: 0, Max: int64(MaxWarmupTime), Zero: "the first call only"},
	ExplainProfile: Setting{Field: "explain_profile", Flag: "profile-time", What: "profiled run's time", Duration: true, Default: int64(explain.DefaultProfileTime), Min: int64(10 * time.Millisecond), Max: int64(MaxWarmupTime)},
}

// WarmupSettings are a warm-up study's numbers as a person gives them (the CLI's flags,
// the page's request), before any check: nil is its setting's default (Bounds), a zero
// budget is none.
type WarmupSettings struct {
	Executions, Calls, Group *int
	Budget, Timeout          *time.Duration
}

// Check checks the settings against Bounds, once, and returns them as WarmupPlan holds
// them (a timeout of zero: the collection's budget and DefaultTimeout), or a *FieldError
// that names the setting and what it allows.
func (in WarmupSettings) Check() (executions int, c warmup.Collection, timeout time.Duration, err error) {
	if executions, err = Bounds.WarmupExecutions.count(in.Executions); err != nil {
		return
	}
	if c.Samples, err = Bounds.Calls.count(in.Calls); err != nil {
		return
	}
	if c.Group, err = Bounds.Group.count(in.Group); err != nil {
		return
	}
	if c.Budget, err = Bounds.Budget.duration(in.Budget); err != nil {
		return
	}
	if timeout, err = Bounds.Timeout.duration(in.Timeout); err != nil {
		return
	}
	return executions, c, timeout, nil
}

// count is a count as given (nil: the setting's default), checked.
func (s Setting) count(v *int) (int, error) {
	if v == nil {
		return int(s.Default), nil
	}
	return *v, s.Check(int64(*v))
}

// duration is a duration as measure.Options holds it: absent, 0 (the default); 0, -1
// (none); else itself, checked.
func (s Setting) duration(v *time.Duration) (time.Duration, error) {
	switch {
	case v == nil:
		return 0, nil
	case *v == 0 && s.Min == 0:
		return -1, nil
	}
	return *v, s.Check(int64(*v))
}

// format renders a value of the setting: "20", "1.5s".
func (s Setting) format(v int64) string {
	if s.Duration {
		return time.Duration(v).String()
	}
	return strconv.FormatInt(v, 10)
}

// Range says what the setting allows: "1 to 100", "0 (one call per sample) to 1s".
func (s Setting) Range() string {
	lo := s.format(s.Min)
	if s.Min == 0 && s.Zero != "" {
		lo = "0 (" + s.Zero + ")"
	}
	return lo + " to " + s.format(s.Max)
}

// WithMax is the setting with a lower maximum, when max is set and below its own: a
// server's own bound (Input.MaxTimeout). Its default is then at most that maximum.
func (s Setting) WithMax(max int64) Setting {
	if max > 0 && max < s.Max {
		s.Max = max
		s.Default = min(s.Default, max)
	}
	return s
}

// Check returns a *FieldError when v is outside the setting's range, saying what is
// allowed.
func (s Setting) Check(v int64) error {
	if v < s.Min || v > s.Max {
		return fieldError(s.Field, fmt.Errorf("%s = %s is out of range: allowed %s", s.What, s.format(v), s.Range()))
	}
	return nil
}

// Input is a run as a person asks for it, before any check: the CLI's flags, the page's
// request. A nil number is its setting's default (Bounds); a zero duration means none
// (Setting.Zero), as a zero count of warm-up runs does.
type Input struct {
	// Engines and Kernels select by name, as Plan's do; empty means all.
	Engines, Kernels []string
	// Args are the kernels' parameters as typed (args.<name>): "n" → "30" for every
	// selected kernel that has an n, "fib_rec.n" → "30" for one.
	Args map[string]string
	// OneKernel makes Args the parameters of the one kernel asked for (Kernels[0], or
	// Custom), as the page's request gives them: an unknown name is that kernel's error
	// ("fib_rec has no parameter k: its parameters are n").
	OneKernel bool
	// Runs and Warmup count timed runs per cell and untimed runs per execution;
	// Executions counts a cell's worker processes, among which its runs are spread.
	Runs, Warmup, Executions *int
	// WarmupTime and MinSample are the minimum warm-up and sample times; Timeout bounds a
	// cell (setup included).
	WarmupTime, MinSample, Timeout *time.Duration
	// MaxTimeout, when set, is a server's own time limit: Timeout may not pass it, and an
	// absent Timeout is it (Bounds.Timeout narrowed, WithMaxTimeout).
	MaxTimeout time.Duration
	// Cold compiles without a compilation cache (measure.Options.Cold).
	Cold bool
	// Custom is a user's kernel, as Plan.Custom.
	Custom *custom.Kernel
}

// Plan checks the input against Bounds and turns it into a Plan, or returns a *FieldError
// that names the field and what it allows. Plan.Jobs does the rest of the checks (names,
// arguments' ranges).
func (in Input) Plan() (Plan, error) {
	p := Plan{Engines: in.Engines, Kernels: in.Kernels, Custom: in.Custom}
	var err error
	if p.Args, err = ParseArgs(in.Args); err != nil {
		return Plan{}, err
	}
	if in.OneKernel && len(p.Args) > 0 {
		var kernel string
		switch {
		case in.Custom != nil:
			kernel = in.Custom.Kernel().Name
		case len(in.Kernels) == 1:
			kernel = in.Kernels[0]
		default:
			return Plan{}, fieldError("kernel", fmt.Errorf("arguments of one kernel need one kernel (%d given)", len(in.Kernels)))
		}
		qualified := make(map[string]int, len(p.Args))
		for name, v := range p.Args {
			qualified[kernel+"."+name] = v
		}
		p.Args = qualified
	}
	o := measure.Options{Cold: in.Cold}
	if o.Runs, err = Bounds.Runs.count(in.Runs); err != nil {
		return Plan{}, err
	}
	if o.Warmup, err = Bounds.Warmup.count(in.Warmup); err != nil {
		return Plan{}, err
	}
	if o.WarmupTime, err = Bounds.WarmupTime.duration(in.WarmupTime); err != nil {
		return Plan{}, err
	}
	if o.MinSample, err = Bounds.MinSample.duration(in.MinSample); err != nil {
		return Plan{}, err
	}
	if p.Timeout, err = Bounds.Timeout.WithMax(int64(in.MaxTimeout)).duration(in.Timeout); err != nil {
		return Plan{}, err
	}
	if in.Timeout == nil {
		p.Timeout = in.MaxTimeout
	}
	if p.Executions, err = Bounds.Executions.count(in.Executions); err != nil {
		return Plan{}, err
	}
	p.Options = o
	return p, nil
}

// ParseArgs reads kernel parameters given as text (args.<name>) as integers; their ranges
// are the catalogue's to check (kernels.Kernel.Args, in Plan.Jobs). The error names the
// field: "args.n".
func ParseArgs(named map[string]string) (map[string]int, error) {
	if len(named) == 0 {
		return nil, nil
	}
	ints := make(map[string]int, len(named))
	for _, name := range slices.Sorted(maps.Keys(named)) {
		v, err := strconv.Atoi(named[name])
		if err != nil {
			return nil, fieldError("args."+name, fmt.Errorf("%s=%s: the value must be an integer", name, named[name]))
		}
		ints[name] = v
	}
	return ints, nil
}

// CellBudget is the time a cell's runs are planned to fit in under a time limit
// (measure.Options.Budget): runs that would not fit are skipped, so that a slow cell
// reports fewer runs rather than none.
func CellBudget(timeout time.Duration) time.Duration {
	return timeout * budgetShare / 100
}
