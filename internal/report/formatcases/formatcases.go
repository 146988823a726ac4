// Package formatcases holds the durations, ratios and grouped digits every formatter of the
// project writes alike, each with its text, and the intervals every one of them calls wide
// or not: report.FormatNs's, FormatRatio's and Grouped's tests, measure.Result.Wide's, and
// the page's (web/src/format.ts: duration, ratio, grouped; web/src/stats.ts: wide; run
// under Node by package web's test) check the same cases, durations.json, ratios.json,
// groups.json and spreads.json.
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
	//go:embed groups.json
	groupsJSON []byte
	//go:embed spreads.json
	spreadsJSON []byte
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

// Group is a decimal integer and its digits grouped in threes for reading, the groups
// joined by a narrow no-break space (U+202F): {"75430", "75 430"}.
type Group struct {
	Decimal string `json:"decimal"`
	Text    string `json:"text"`
}

// Spread is a cell's median and its 95% interval, in ns, whether the interval is wide
// (reaches past ±5% of the median) and its half-width as written: "±4.0%" under 10%,
// "±36%" from 10%. Level 0 is a cell without an interval (under 6 samples), which is never
// wide: its spread is unknown, written "±?".
type Spread struct {
	Median float64 `json:"median"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Level  float64 `json:"level"`
	Wide   bool    `json:"wide"`
	Text   string  `json:"text"`
}

// Durations returns the cases of durations.json.
func Durations() ([]Duration, error) { return decode[Duration]("durations.json", durationsJSON) }

// Ratios returns the cases of ratios.json.
func Ratios() ([]Ratio, error) { return decode[Ratio]("ratios.json", ratiosJSON) }

// Groups returns the cases of groups.json.
func Groups() ([]Group, error) { return decode[Group]("groups.json", groupsJSON) }

// Spreads returns the cases of spreads.json.
func Spreads() ([]Spread, error) { return decode[Spread]("spreads.json", spreadsJSON) }

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
