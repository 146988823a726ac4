package runner

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/custom"
	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/kernels"
)

// Plan says which cells a bench run measures: the one path from what a person asked for
// (Input: the CLI's flags, the page's request) to checked jobs. Empty fields select every
// kernel on every engine at the articles' sizes with the default time limit; the runs are
// always given (measure.Defaults() for the usual ones).
type Plan struct {
	// Engines and Kernels select by name; empty means all, in the reports' order.
	Engines []string
	Kernels []string
	// Args sets parameters by name for every selected kernel that has that parameter
	// ("n": 30), or for one kernel ("fib_rec.n": 30); the rest keep their defaults.
	Args map[string]int
	// Options are the runs and warm-up runs of each cell, taken as given and checked
	// against Bounds: zero durations for measure's defaults, negative ones for none.
	Options measure.Options
	// Timeout bounds each execution of a cell, setup included; 0 means DefaultTimeout.
	Timeout time.Duration
	// Executions is how many worker processes measure each cell; 0 means
	// DefaultExecutions.
	Executions int
	// Custom, when set, is a user's built kernel (package custom), the one kernel of the
	// plan: Kernels must be empty, and Engines are limited to custom.EnginesFor (all of
	// them when empty). Args name its function's parameters.
	Custom *custom.Kernel
}

// FieldError is an error of Plan.Jobs about one thing asked for. Field names it as the
// page's API does: "engine", "kernel", "args.<name>" (or "args"), "runs", "warmup",
// "warmup_time", "min_sample", "timeout".
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

func fieldError(field string, err error) error { return &FieldError{Field: field, Err: err} }

// argField names the field of a kernel argument error: "args.<name>", or "args".
func argField(err error) string {
	var ae *kernels.ArgError
	if errors.As(err, &ae) && ae.Param != "" {
		return "args." + ae.Param
	}
	return "args"
}

// Jobs checks the plan's names and arguments and returns its jobs, kernel by kernel and
// engine by engine, or a *FieldError that names what is allowed: the valid engines or
// kernels, a kernel's parameters and their ranges. The numbers (runs, times, executions)
// are Input.Plan's to check, against Bounds, once.
func (p Plan) Jobs() ([]Job, error) {
	opts := p.Options
	engineNames := p.Engines
	if len(engineNames) == 0 {
		engineNames = engine.Names()
		if p.Custom != nil {
			engineNames = custom.EnginesFor(p.Custom)
		}
	}
	if p.Custom != nil {
		if len(p.Kernels) > 0 {
			return nil, fieldError("kernel", fmt.Errorf("a plan runs either a user kernel or catalogue kernels, not both"))
		}
		for _, name := range engineNames {
			if ok := custom.EnginesFor(p.Custom); !slices.Contains(ok, name) {
				msg := fmt.Sprintf("engine %q does not run user kernels: they run on %s (and browser-wasm in the page)", name, strings.Join(ok, ", "))
				if name == engine.Native {
					msg = "native runs of user kernels are off: they run on " + strings.Join(ok, ", ") + " (and browser-wasm in the page); a server started with --allow-native-custom also runs them natively"
				}
				return nil, fieldError("engine", errors.New(msg))
			}
		}
	}
	for _, name := range engineNames {
		if err := engine.Known(name); err != nil {
			return nil, fieldError("engine", err)
		}
	}
	var ks []*kernels.Kernel
	switch {
	case p.Custom != nil:
		ks = []*kernels.Kernel{p.Custom.Kernel()}
	case len(p.Kernels) == 0:
		ks = kernels.Every()
	}
	for _, name := range p.Kernels {
		k, err := kernels.Lookup(name)
		if err != nil {
			return nil, fieldError("kernel", err)
		}
		ks = append(ks, k)
	}

	// Split the named arguments into those for all kernels and those for one.
	shared := map[string]int{}
	perKernel := map[string]map[string]int{}
	for name, v := range p.Args {
		if kname, param, ok := strings.Cut(name, "."); ok {
			if !slices.ContainsFunc(ks, func(k *kernels.Kernel) bool { return k.Name == kname }) {
				if _, err := kernels.Lookup(kname); err != nil {
					return nil, fieldError("args."+name, fmt.Errorf("argument %s: %w", name, err))
				}
				return nil, fieldError("args."+name, fmt.Errorf("argument %s: kernel %s is not selected", name, kname))
			}
			if perKernel[kname] == nil {
				perKernel[kname] = map[string]int{}
			}
			perKernel[kname][param] = v
			continue
		}
		shared[name] = v
	}
	for name := range shared {
		if !slices.ContainsFunc(ks, func(k *kernels.Kernel) bool { return hasParam(k, name) }) {
			return nil, fieldError("args."+name, fmt.Errorf("no selected kernel has a parameter %q: the parameters are %s", name, paramSummary(ks)))
		}
	}

	var jobs []Job
	var notApplicable error // the first pair left out, for a plan that is nothing else
	for _, k := range ks {
		named := map[string]int{}
		for name, v := range shared {
			if hasParam(k, name) {
				named[name] = v
			}
		}
		for name, v := range perKernel[k.Name] {
			named[name] = v
		}
		args, err := k.Args(named)
		if err != nil {
			field := argField(err)
			if len(shared) > 0 && len(p.Kernels) != 1 {
				err = fmt.Errorf("%w (choose kernels with --kernel, or set one kernel's parameter as %s.<name>=<value>)", err, k.Name)
			}
			return nil, fieldError(field, err)
		}
		for _, e := range engineNames {
			// A kernel an engine does not run (host_call off kernels.wasm) is no job: the
			// reports show its cell as not applicable.
			if err := engine.Applies(e, k); err != nil {
				notApplicable = cmp.Or(notApplicable, err)
				continue
			}
			jobs = append(jobs, Job{engine: e, kernel: k, custom: p.Custom, args: args, options: opts, timeout: p.Timeout, executions: p.Executions})
		}
	}
	if len(jobs) == 0 && notApplicable != nil {
		return nil, fieldError("kernel", fmt.Errorf("%w: choose an engine that runs kernels.wasm (%s)", notApplicable, strings.Join(kernelsWasmEngines(), ", ")))
	}
	return jobs, nil
}

// kernelsWasmEngines lists the registered engines that run kernels.wasm (engine.Info.KernelsWasm).
func kernelsWasmEngines() []string {
	var names []string
	for _, name := range engine.Names() {
		if i, ok := engine.Lookup(name); ok && i.KernelsWasm {
			names = append(names, name)
		}
	}
	return names
}

func hasParam(k *kernels.Kernel, name string) bool {
	return slices.ContainsFunc(k.Params, func(p kernels.Param) bool { return p.Name == name })
}

// paramSummary lists the parameters of the kernels with their ranges: "n (0 to 92) for fib_it, …".
func paramSummary(ks []*kernels.Kernel) string {
	seen := map[string][]string{}
	var order []string
	for _, k := range ks {
		for _, p := range k.Params {
			key := fmt.Sprintf("%s (%d to %d)", p.Name, p.Min, p.Max)
			if _, ok := seen[key]; !ok {
				order = append(order, key)
			}
			seen[key] = append(seen[key], k.Name)
		}
	}
	sort.Strings(order)
	parts := make([]string, len(order))
	for i, key := range order {
		parts[i] = key + " for " + strings.Join(seen[key], ", ")
	}
	return strings.Join(parts, "; ")
}
