// Package formatcases holds the durations and the ratios every formatter of the project
// writes alike, each with its text: report.FormatNs's and report.FormatRatio's tests and
// the page's (web/src/format.ts, duration and ratio, run under Node by package web's test)
// check the same cases, durations.json and ratios.json.
package formatcases

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

var (
	//go:embed durations.json
	durationsJSON []byte
	//go:embed ratios.json
	ratiosJSON []byte
)

// Duration is a duration in nanoseconds and its text: {1234.5, "1.23 µs"}.
type Duration struct {
	NS   float64 `json:"ns"`
	Text string  `json:"text"`
}

// Ratio is a ratio to a baseline and its text: {3.04, "×3.04"}; "" for none.
type Ratio struct {
	X    float64 `json:"x"`
	Text string  `json:"text"`
}

// Durations returns the cases of durations.json.
func Durations() ([]Duration, error) { return decode[Duration]("durations.json", durationsJSON) }

// Ratios returns the cases of ratios.json.
func Ratios() ([]Ratio, error) { return decode[Ratio]("ratios.json", ratiosJSON) }

func decode[T any](name string, data []byte) ([]T, error) {
	var cases []T
	if err := json.Unmarshal(data, &cases); err != nil {
		return nil, fmt.Errorf("formatcases: %s: %w", name, err)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("formatcases: %s holds no case", name)
	}
	return cases, nil
}
