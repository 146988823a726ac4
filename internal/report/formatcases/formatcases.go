// Package formatcases holds the durations, ratios and grouped digits every formatter of the
// project writes alike, each with its text, and the intervals every one of them calls wide
// or not: report.FormatNs's, FormatRatio's and Grouped's tests, measure.Result.Wide's, and
// the page's (web/src/format.ts: duration, ratio, grouped; web/src/stats.ts: wide; run
// under Node by package web's test) check the same cases, durations.json, ratios.json,
// groups.json and spreads.json. executions.json holds the statistics of a cell measured in
// several processes, which measure (AcrossExecutions, RatioOf, GeoMean, Ratio.Verdict,
// ProcessSpread, TQuantile) and stats.ts compute alike: its expected values were computed
// apart from both (Student's t from a numerical integral of its density), and are matched
// to a relative 1e-9.
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
	//go:embed executions.json
	executionsJSON []byte
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

// Execution is one process's measurement of a cell, as a cell's executions array holds it:
// its median and, when it has them, its interval and its fastest and slowest samples.
type Execution struct {
	Median float64   `json:"median_ns"`
	CI     *Interval `json:"ci,omitempty"`
	Min    float64   `json:"min_ns,omitempty"`
	Max    float64   `json:"max_ns,omitempty"`
}

// Interval is a 95% interval in ns, as a cell's ci holds it.
type Interval struct {
	Lo    float64 `json:"lo_ns"`
	Hi    float64 `json:"hi_ns"`
	Level float64 `json:"level"`
}

// ExecQuantile is Student's t quantile P with DF degrees of freedom.
type ExecQuantile struct {
	P  float64 `json:"p"`
	DF float64 `json:"df"`
	T  float64 `json:"t"`
}

// ExecCell is a cell's executions and its figure over them: the median (the geometric mean of
// the executions' medians) and its interval, nil for none.
type ExecCell struct {
	Executions []Execution `json:"executions"`
	Median     float64     `json:"median_ns"`
	CI         *Interval   `json:"ci,omitempty"`
}

// ExecRatio is cell A's time over cell B's from their executions, with its interval (level 0:
// none) and its verdict ("slower", "faster", "no clear difference").
type ExecRatio struct {
	A []Execution `json:"a"`
	B []Execution `json:"b"`
	Want
}

// Want is a ratio's expected figures.
type Want struct {
	X       float64 `json:"x"`
	Lo      float64 `json:"lo"`
	Hi      float64 `json:"hi"`
	Level   float64 `json:"level"`
	Verdict string  `json:"verdict"`
}

// ExecGeoMean is the geometric mean of the ratios of pairs of cells, with its interval.
type ExecGeoMean struct {
	Pairs []struct {
		A []Execution `json:"a"`
		B []Execution `json:"b"`
	} `json:"pairs"`
	Want
}

// ExecSpread is how far a cell's executions spread (largest median over smallest, 0
// under two) and whether that spread dominates their own intervals.
type ExecSpread struct {
	Executions []Execution `json:"executions"`
	X          float64     `json:"x"`
	Dominates  bool        `json:"dominates"`
}

// ExecutionCases are the cases of executions.json.
type ExecutionCases struct {
	Quantiles []ExecQuantile `json:"quantiles"`
	Cells     []ExecCell     `json:"cells"`
	Ratios    []ExecRatio    `json:"ratios"`
	GeoMeans  []ExecGeoMean  `json:"geomeans"`
	Spreads   []ExecSpread   `json:"spreads"`
}

// Executions returns the cases of executions.json.
func Executions() (ExecutionCases, error) {
	var c ExecutionCases
	if err := json.Unmarshal(executionsJSON, &c); err != nil {
		return c, fmt.Errorf("formatcases: executions.json: %w", err)
	}
	if len(c.Quantiles) == 0 || len(c.Cells) == 0 || len(c.Ratios) == 0 || len(c.GeoMeans) == 0 || len(c.Spreads) == 0 {
		return c, fmt.Errorf("formatcases: executions.json lacks a kind of case")
	}
	return c, nil
}

//go:embed baselines.json
var baselinesJSON []byte

// BaselineChoice is a row's engines with a time (Timed), the engine the reader chose
// (Prefer, "" for none) and the baseline its ratios are taken against ("" for none).
type BaselineChoice struct {
	Prefer string   `json:"prefer"`
	Timed  []string `json:"timed"`
	Want   string   `json:"want"`
}

// RatioInterval is a ratio's interval and its text ("" for none, level 0).
type RatioInterval struct {
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Level float64 `json:"level"`
	Text  string  `json:"text"`
}

// BaselineCases are the cases of baselines.json: report.Baseline's and stats.ts baseline's
// choice of a row's baseline, and report.FormatRatioInterval's and format.ts
// ratioInterval's text.
type BaselineCases struct {
	Choices   []BaselineChoice `json:"choices"`
	Intervals []RatioInterval  `json:"intervals"`
}

// Baselines returns the cases of baselines.json.
func Baselines() (BaselineCases, error) {
	var c BaselineCases
	if err := json.Unmarshal(baselinesJSON, &c); err != nil {
		return c, fmt.Errorf("formatcases: baselines.json: %w", err)
	}
	if len(c.Choices) == 0 || len(c.Intervals) == 0 {
		return c, fmt.Errorf("formatcases: baselines.json lacks a kind of case")
	}
	return c, nil
}
