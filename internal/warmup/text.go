package warmup

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/report"
)

// ShortCall is the time per call under which WriteText suggests samples of several calls
// (--group): a clock read costs tens of nanoseconds.
const ShortCall = 1000.0

// SparkWidth is the number of columns of a sparkline.
const SparkWidth = 60

// sparkLevels are the sparkline's eight heights, lowest first.
var sparkLevels = []rune("▁▂▃▄▅▆▇█")

// WriteText writes the study as the CLI prints it: the method, a table with one row per
// engine (the verdict, the median over the executions of each figure) and one row per
// execution, then a sparkline per execution (time per call on a log scale against the call
// number, the changepoints marked below it with '|' and the start of the steady state with
// 's').
func WriteText(w io.Writer, r Report) error {
	c := r.Method.Collection
	calls := "1 call per sample"
	if c.Group > 1 {
		calls = fmt.Sprintf("samples of %d calls (a time per call is the sample's / %d)", c.Group, c.Group)
	}
	fmt.Fprintf(w, "warm-up of %s: %d executions per engine, each a fresh process, up to %d samples or %v each; %s\n",
		r.Label, r.Method.Executions, c.Samples, c.Budget, calls)
	fmt.Fprintf(w, "analysis: %s; segments within %.0f%% of the last are equal; no steady state when the last change is in the last %.0f%%\n\n",
		r.Method.Penalty, 100*r.Method.Tolerance, 100*r.Method.SteadyShare)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "engine\trun\tclass\tsteady median (95% CI)\tfirst\tfirst 10\tworst 4\taverage\tsamples\tload\ttimed by")
	for _, e := range r.Engines {
		s := e.Summary()
		verdict := "no run analysed"
		if e.Pair != nil {
			verdict = e.Pair.Verdict
			if e.Pair.Class != "" {
				verdict += " " + string(e.Pair.Class)
			}
		}
		fmt.Fprintf(tw, "%s\tall\t%s\t%s\t%s\t%s\t%s\t%s\t\t\t\n", e.Engine, verdict, Duration(s.SteadyMedian), Duration(s.First), Duration(s.Early), Duration(s.Worst), Duration(s.Average))
		for i, run := range e.Runs {
			if run.Analysis == nil {
				fmt.Fprintf(tw, "\t#%d\t%s\t\t\t\t\t\t%d\t%s\t%s\n", i+1, run.Error, len(run.Times), LoadWords(run.Setup), run.Timer)
				continue
			}
			x := run.Analysis
			med := "–"
			if x.SteadyStart >= 0 {
				med = Duration(x.SteadyMedian)
				if x.SteadyCI.Valid() {
					med += fmt.Sprintf(" (%s–%s)", Duration(x.SteadyCI.Lo), Duration(x.SteadyCI.Hi))
				}
			}
			samples := fmt.Sprint(x.Samples)
			if run.Stopped != "" {
				samples += " (" + run.Stopped + ")"
			}
			fmt.Fprintf(tw, "\t#%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, x.Words(), med, Duration(x.First), Duration(x.Early), Duration(x.Worst), Duration(x.Average), samples, LoadWords(run.Setup), run.Timer)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range r.Engines {
		if s := e.Summary(); c.Group == 1 && s.SteadyMedian < ShortCall {
			fmt.Fprintf(w, "\nnote: %s's calls take %s, near a clock read's own cost: --group %d times them together\n",
				e.Engine, Duration(s.SteadyMedian), int(math.Ceil(ShortCall/s.SteadyMedian)))
			break
		}
	}
	for _, e := range r.Engines {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, run := range e.Runs {
			for _, v := range buckets(run.Times, SparkWidth) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		if math.IsInf(lo, 0) {
			continue
		}
		fmt.Fprintf(w, "\n%s: time per call, log scale from %s to %s, calls left to right\n", e.Engine, Duration(lo), Duration(hi))
		for i, run := range e.Runs {
			if len(run.Times) == 0 {
				continue
			}
			fmt.Fprintf(w, "  #%d %s\n", i+1, Sparkline(run.Times, lo, hi, SparkWidth))
			if run.Analysis != nil {
				fmt.Fprintf(w, "     %s\n", marks(*run.Analysis, SparkWidth))
			}
		}
	}
	return nil
}

// LoadWords writes an execution's load before its first call, apart from the series as a
// cell's setup is: "compile 41.2ms, instantiate 1.30ms" (wazero's compiler, a browser's
// wasm tier); "–" when the engine timed no load (native, a driver whose runtime loads the
// kernel as it starts).
func LoadWords(s engine.Setup) string {
	if s.Compile == 0 && s.Instantiate == 0 {
		return "–"
	}
	w := fmt.Sprintf("compile %s, instantiate %s", report.FormatNs(float64(s.Compile)), report.FormatNs(float64(s.Instantiate)))
	if s.Cached {
		w += " (cached)"
	}
	return w
}

// Sparkline draws times in width columns (each the median of its stretch of samples) on a
// log scale from lo to hi.
func Sparkline(times []float64, lo, hi float64, width int) string {
	var b strings.Builder
	span := math.Log(hi) - math.Log(lo)
	for _, v := range buckets(times, width) {
		level := 0
		if span > 0 {
			level = int(math.Round((math.Log(v) - math.Log(lo)) / span * float64(len(sparkLevels)-1)))
		}
		b.WriteRune(sparkLevels[max(0, min(level, len(sparkLevels)-1))])
	}
	return b.String()
}

// buckets splits times into at most width stretches of equal length and returns each one's
// median.
func buckets(times []float64, width int) []float64 {
	n := len(times)
	if n == 0 {
		return nil
	}
	cols := min(width, n)
	out := make([]float64, cols)
	for c := range cols {
		out[c] = median(times[c*n/cols : (c+1)*n/cols])
	}
	return out
}

// marks is the line under a sparkline: '|' in the columns of changepoints, 's' in the
// column where the steady state starts.
func marks(x Execution, width int) string {
	cols := min(width, x.Samples)
	line := []rune(strings.Repeat(" ", cols))
	col := func(i int) int { return min(cols-1, i*cols/x.Samples) }
	for _, cp := range x.Changepoints {
		line[col(cp)] = '|'
	}
	if x.SteadyStart > 0 {
		line[col(x.SteadyStart)] = 's'
	}
	return strings.TrimRight(string(line), " ")
}

// Duration writes ns per call as the reports do (report.FormatNs: "812 ns", "38.1 µs"), and
// "–" for none (NaN).
func Duration(ns float64) string {
	if math.IsNaN(ns) {
		return "–"
	}
	return report.FormatNs(ns)
}

// WriteMarkdown writes studies as one Markdown table, a row per kernel and engine: the
// verdict over the executions, the median time to the steady state and steady median over
// the executions that reached one, and JetStream's figures (medians over the executions).
func WriteMarkdown(w io.Writer, reps []Report) error {
	if len(reps) == 0 {
		return nil
	}
	m := reps[0].Method
	fmt.Fprintf(w, "%d executions per engine, each a fresh process, up to %s samples or %v each (the first %d never outliers); changepoints by PELT, penalty %g·ln(n); medians over the executions.\n\n",
		m.Executions, thousands(m.Collection.Samples), m.Collection.Budget, OutlierWindow, float64(DefaultPenaltyFactor))
	fmt.Fprintln(w, "| kernel | engine | classes | steady after | steady median | first | first 10 | worst 4 | average | timed by |")
	fmt.Fprintln(w, "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, r := range reps {
		for _, e := range r.Engines {
			s := e.Summary()
			classes, timer := "—", ""
			if e.Pair != nil {
				classes = classCounts(*e.Pair)
			}
			var fails []string
			for _, run := range e.Runs {
				if timer == "" && run.Timer != "" {
					timer = run.Timer
				}
				if run.Error != "" {
					fails = append(fails, run.Error)
				}
			}
			if len(fails) > 0 {
				classes += fmt.Sprintf("; %d failed: %s", len(fails), strings.ReplaceAll(fails[0], "|", "/"))
			}
			after := "—"
			switch {
			case s.Steady > 0 && s.SteadyCalls == 0:
				after = "the first call"
			case s.Steady > 0:
				after = fmt.Sprintf("%s calls, %s", thousands(int(s.SteadyCalls)), millis(s.SteadyAfterNs))
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Label, e.Engine, classes, after,
				Duration(s.SteadyMedian), Duration(s.First), Duration(s.Early), Duration(s.Worst), Duration(s.Average), timer)
		}
	}
	return nil
}

// classCounts writes a pair's classes: "warm-up ×3", or "flat 2, warm-up 1" when they
// disagree.
func classCounts(p Pair) string {
	if p.Class != "" {
		n := 0
		for _, c := range p.Classes {
			n += c
		}
		return fmt.Sprintf("%s ×%d", p.Class, n)
	}
	var parts []string
	for _, c := range []Class{Flat, Warmup, Slowdown, NoSteadyState} {
		if n := p.Classes[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, n))
		}
	}
	return strings.Join(parts, ", ")
}
