package runner

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/engine"
	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/measure"
)

// Plan says which cells a bench run measures. The zero value means every kernel on every
// engine at the articles' sizes, with the default runs, warm-up and time limit.
type Plan struct {
	// Engines and Kernels select by name; empty means all, in the reports' order.
	Engines []string
	Kernels []string
	// Args sets parameters by name for every selected kernel that has that parameter
	// ("n": 30), or for one kernel ("fib_rec.n": 30); the rest keep their defaults.
	Args    map[string]int
	Options measure.Options
	Timeout time.Duration
}

// Jobs checks the plan and returns its jobs, kernel by kernel and engine by engine, or an
// error that names what is allowed: the valid engines or kernels, a kernel's parameters
// and their ranges.
func (p Plan) Jobs() ([]Job, error) {
	engineNames := p.Engines
	if len(engineNames) == 0 {
		engineNames = engine.Names()
	}
	for _, name := range engineNames {
		if _, err := engine.New(name); err != nil {
			return nil, err
		}
	}
	var ks []*kernels.Kernel
	if len(p.Kernels) == 0 {
		ks = kernels.All()
	}
	for _, name := range p.Kernels {
		k, err := kernels.Lookup(name)
		if err != nil {
			return nil, err
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
					return nil, fmt.Errorf("argument %s: %w", name, err)
				}
				return nil, fmt.Errorf("argument %s: kernel %s is not selected", name, kname)
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
			return nil, fmt.Errorf("no selected kernel has a parameter %q: the parameters are %s", name, paramSummary(ks))
		}
	}

	var jobs []Job
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
			if len(shared) > 0 && len(p.Kernels) != 1 {
				err = fmt.Errorf("%w (choose kernels with --kernel, or set one kernel's parameter as %s.<name>=<value>)", err, k.Name)
			}
			return nil, err
		}
		for _, e := range engineNames {
			job := Job{Engine: e, Kernel: k.Name, Args: args, Options: p.Options, Timeout: p.Timeout}
			if err := job.Validate(); err != nil {
				return nil, err
			}
			jobs = append(jobs, job)
		}
	}
	return jobs, nil
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
