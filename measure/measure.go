// Package measure is the harness around every engine: warm-up, N timed runs with a
// monotonic clock around the call only, the result checked against the catalogue, and
// min / median / max. A failure is a result, never a time.
package measure

import (
	"time"

	"github.com/wasmgap/wasmgap/engine"
)

// Options say how many runs make one measurement.
type Options struct {
	// Runs is the number of timed runs (default 5).
	Runs int `json:"runs"`
	// Warmup is the number of untimed runs before them (default 1).
	Warmup int `json:"warmup"`
}

// Result is one cell of a report: one kernel with its arguments on one engine.
type Result struct {
	Kernel   string `json:"kernel"`
	Args     []int  `json:"args"`
	Engine   string `json:"engine"`
	Runs     int    `json:"runs"`
	Warmup   int    `json:"warmup"`
	Value    int64  `json:"value"`
	Expected int64  `json:"expected"`
	// Samples are the timed runs, in the order they ran.
	Samples []time.Duration `json:"samples_ns,omitempty"`
	Min     time.Duration   `json:"min_ns"`
	Median  time.Duration   `json:"median_ns"`
	Max     time.Duration   `json:"max_ns"`
	Setup   engine.Setup    `json:"setup"`
	// Failure, when not empty, is what happened instead of a time: "stack overflow",
	// "timed out after 30s", "crashed: <reason>", "wrong result: got X, want Y".
	Failure string `json:"failure,omitempty"`
}

// Failed reports whether the cell holds a failure rather than times.
func (r Result) Failed() bool { return r.Failure != "" }
