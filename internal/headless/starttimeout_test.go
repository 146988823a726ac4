package headless

import (
	"testing"
	"time"
)

// A busy machine stretches a start's limit by its load per core, within bounds; an idle
// or unknown one keeps it.
func TestStartTimeout(t *testing.T) {
	for _, tc := range []struct {
		timeout time.Duration
		load    float64
		want    time.Duration
	}{
		{0, 0, time.Minute},
		{0, 0.5, time.Minute},
		{10 * time.Second, 1, 10 * time.Second},
		{10 * time.Second, 4.5, 45 * time.Second},
		{time.Minute, 18, 18 * time.Minute},
		{time.Minute, 1000, maxStretch * time.Minute},
	} {
		if got := startTimeout(tc.timeout, tc.load); got != tc.want {
			t.Errorf("startTimeout(%v, %g) = %v, want %v", tc.timeout, tc.load, got, tc.want)
		}
	}
}
