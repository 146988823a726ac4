// Package formatcases holds the durations every formatter of the project writes alike, each
// with its text: report.FormatNs's test and the page's (web/src/format.ts, duration, run
// under Node by package web's test) check the same cases, durations.json.
package formatcases

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

//go:embed durations.json
var durationsJSON []byte

// Duration is a duration in nanoseconds and its text: {1234.5, "1.23 µs"}.
type Duration struct {
	NS   float64 `json:"ns"`
	Text string  `json:"text"`
}

// Durations returns the cases of durations.json.
func Durations() ([]Duration, error) {
	var cases []Duration
	if err := json.Unmarshal(durationsJSON, &cases); err != nil {
		return nil, fmt.Errorf("formatcases: durations.json: %w", err)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("formatcases: durations.json holds no case")
	}
	return cases, nil
}
