package explain

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine/driver"
	"github.com/wasmgap/wasmgap/internal/measure"
)

// sampled is a profile taken of another process: its samples, or why there are none, and
// its memory map while it ran (to place a position-independent binary).
type sampled struct {
	ips  []uint64
	err  error
	maps string
	d    time.Duration
}

// warmOptions are the harness's warm-up as r asks for it: its first call, then batches
// until the warm-up time has passed (measure's warm-up step).
func warmOptions(r request) measure.Options {
	return measure.Options{Warmup: measure.DefaultWarmup, WarmupTime: r.opts.WarmupTime}
}

// warmDriver loads the driver engine e (made with the runtime's diagnostic flags), runs
// the harness's own warm-up step on it (measure.Warm), and, when a profile is asked for,
// samples the driver with perf while it calls the kernel for the profile's time; then it
// stops the driver, so that what the runtime printed about its code is complete. pid is
// the driver's process id, by which a runtime names the files it wrote about its code
// (PHP's /tmp/jit-<pid>.dump).
func warmDriver(ctx context.Context, r request, e *driver.Engine) (_ *sampled, pid int, _ error) {
	res := measure.Warm(ctx, e, r.k, r.args, warmOptions(r))
	if res.Failure != "" {
		return nil, 0, fmt.Errorf("warm-up: %s", res.Failure)
	}
	defer e.Close(ctx)
	pid = e.PID()
	var s *sampled
	if r.opts.Profile {
		s = &sampled{d: r.opts.profileTime()}
		if pid == 0 {
			s.err = fmt.Errorf("%s runs inside this process: no process of its own to sample", r.engine)
		} else {
			// Batches of about 50 ms until perf has sampled for the profile's time.
			batch := 1
			if _, _, took, err := e.RunTimedBatch(ctx, r.k, r.args, 1); err == nil && took > 0 {
				batch = max(1, int(50*time.Millisecond/took))
			}
			var stop func() error
			s.ips, s.err = perfRecord(ctx, pid, s.d, func() {
				stop = callUntilStopped(func() error {
					_, _, _, err := e.RunTimedBatch(ctx, r.k, r.args, batch)
					return err
				})
			})
			if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps"); err == nil {
				s.maps = string(b)
			}
			if stop != nil {
				if err := stop(); err != nil && s.err == nil {
					s.err = fmt.Errorf("profiled run: %w", err)
				}
			}
		}
	}
	return s, pid, e.Close(ctx)
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
