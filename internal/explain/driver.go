package explain

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine/driver"
	"github.com/wasmgap/wasmgap/internal/engine/external"
)

// sampled is a profile taken of another process: its samples, or why there are none, and
// its memory map while it ran (to place a position-independent binary).
type sampled struct {
	ips  []uint64
	err  error
	maps string
	d    time.Duration
}

// warmDriver starts the named driver of package external with opts (the runtime's
// diagnostic flags), runs the kernel in it for the warm-up time, as the harness's warm-up
// does, and, when a profile is asked for, samples it with perf while it runs the kernel
// for the profile's time; then it stops the driver, so that what the runtime printed
// about its code is complete.
func warmDriver(ctx context.Context, r request, name string, opts external.Options) (*sampled, error) {
	s, _, err := warmDriverPID(ctx, r, name, opts)
	return s, err
}

// warmDriverPID is warmDriver that also says the driver's process id, by which a runtime
// names the files it wrote about its code (PHP's /tmp/jit-<pid>.dump).
func warmDriverPID(ctx context.Context, r request, name string, opts external.Options) (_ *sampled, pid int, _ error) {
	return warmProcess(ctx, r, name, func(ctx context.Context) (*driver.Process, error) { return external.Start(ctx, name, opts) })
}

// warmProcess is warmDriverPID for a driver that start starts (one of another package
// than external: gccgo's).
func warmProcess(ctx context.Context, r request, name string, start func(context.Context) (*driver.Process, error)) (_ *sampled, pid int, _ error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	p, err := start(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer p.Close()
	pid = p.PID
	reps := 1
	var perCall time.Duration
	for warm := time.Duration(0); warm < r.opts.warmup(); {
		res, err := p.CallKernel(ctx, r.k, reps, r.args)
		if err != nil {
			return nil, pid, fmt.Errorf("warm-up: %w", err)
		}
		warm += res.Elapsed
		perCall = res.Elapsed / time.Duration(reps)
		if res.Elapsed < 50*time.Millisecond && reps < 1<<20 {
			reps *= 2
		}
	}
	var s *sampled
	if r.opts.Profile {
		s = &sampled{d: r.opts.profileTime()}
		if p.PID == 0 {
			s.err = fmt.Errorf("%s runs inside this process: no process of its own to sample", name)
		} else {
			// Batches of about 50 ms until perf has sampled for the profile's time.
			batch := 1
			if perCall > 0 {
				batch = max(1, int(50*time.Millisecond/perCall))
			}
			var stop func() error
			s.ips, s.err = perfRecord(ctx, p.PID, s.d, func() {
				stop = callUntilStopped(func() error {
					_, err := p.CallKernel(ctx, r.k, batch, r.args)
					return err
				})
			})
			if b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/maps"); err == nil {
				s.maps = string(b)
			}
			if stop != nil {
				if err := stop(); err != nil && s.err == nil {
					s.err = fmt.Errorf("profiled run: %w", err)
				}
			}
		}
	}
	return s, pid, p.Close()
}

// apply attributes the samples to the machine-code listings, or says why they have none.
func (s *sampled) apply(ls []Listing) {
	if s == nil {
		return
	}
	for i := range ls {
		if ls[i].Kind != KindMachine {
			continue
		}
		if s.err != nil {
			ls[i].Profile = &Profile{Refused: s.err.Error()}
			continue
		}
		attribute(&ls[i], s.ips, s.d)
	}
}
