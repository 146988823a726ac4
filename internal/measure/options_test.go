package measure

import (
	"testing"
	"time"
)

// A zero field means its default, a negative duration none; Warmup's zero is none except
// in the zero Options. WithDefaults keeps what it resolved: applied twice, it changes
// nothing.
func TestOptionsDefaults(t *testing.T) {
	for _, c := range []struct {
		name                 string
		in                   Options
		runs, warmup         int
		sample, warmupTarget time.Duration
	}{
		{"zero value", Options{}, DefaultRuns, DefaultWarmup, DefaultMinSample, DefaultWarmupTime},
		{"runs only", Options{Runs: 3}, 3, 0, DefaultMinSample, 0},
		{"warm-up only", Options{Warmup: 2}, DefaultRuns, 2, DefaultMinSample, DefaultWarmupTime},
		{"none", Options{Runs: 1, Warmup: 1, MinSample: -1, WarmupTime: -1}, 1, 1, 0, 0},
		{"given", Options{Runs: 7, Warmup: 3, MinSample: time.Millisecond, WarmupTime: time.Second}, 7, 3, time.Millisecond, time.Second},
		{"negative counts", Options{Runs: -1, Warmup: -2}, DefaultRuns, 0, DefaultMinSample, 0},
	} {
		o := c.in.WithDefaults()
		if o.Runs != c.runs || o.Warmup != c.warmup || o.SampleTarget() != c.sample || o.WarmupTarget() != c.warmupTarget {
			t.Errorf("%s: %+v → runs %d, warm-up %d, sample %v, warm-up time %v; want %d, %d, %v, %v",
				c.name, c.in, o.Runs, o.Warmup, o.SampleTarget(), o.WarmupTarget(), c.runs, c.warmup, c.sample, c.warmupTarget)
		}
		if again := o.WithDefaults(); again != o {
			t.Errorf("%s: WithDefaults twice: %+v, then %+v", c.name, o, again)
		}
	}
}
