package explain

import (
	"context"
	"fmt"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine/external"
)

// warmDriver starts the named driver of package external with opts (the runtime's
// diagnostic flags), runs the kernel in it for the warm-up time, as the harness's warm-up
// does, and stops it, so that what the runtime printed about its code is complete.
func warmDriver(ctx context.Context, r request, name string, opts external.Options) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	p, err := external.Start(ctx, name, opts)
	if err != nil {
		return err
	}
	defer p.Close()
	reps := 1
	for warm := time.Duration(0); warm < r.opts.warmup(); {
		res, err := p.CallKernel(ctx, r.k, reps, r.args)
		if err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		warm += res.Elapsed
		if res.Elapsed < 50*time.Millisecond && reps < 1<<20 {
			reps *= 2
		}
	}
	return p.Close()
}
