package playground

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/kernels"
)

// A stored run's own page:
//
//	GET /runs/{id}      the run as a page: its table, chart, method and environment
//	GET /runs/{id}.csv  its cells as CSV (the JSON is GET /api/results/{id})

//go:embed runpage.html
var runPageHTML string

var runPageTemplate = template.Must(template.New("run").Parse(runPageHTML))

// runView is what the run's page shows.
type runView struct {
	ID                 int64
	Title, When, Who   string
	Engines            []engineView
	Rows               []rowView
	Baseline           string
	Bars               []barView
	ChartHeight        int
	Method, Env        [][2]string
	Playground         string
	JSON, CSV, Results string
}

type engineView struct{ Name, Title, Color string }

type rowView struct {
	Label string
	Cells []cellView
}

type cellView struct {
	// Engine names the cell's engine, Label titles it (a phone's card line is headed by it).
	Engine, Label                        string
	Median, Spread, Ratio, Failure, Note string
	Title                                string
	Empty                                bool
}

type barView struct {
	Y, Width       int
	Label, Text    string
	Color          string
	Failed, Header bool
}

func (s *Server) mountRunPages(mux *http.ServeMux) {
	if s.opts.Results == nil {
		return
	}
	mux.HandleFunc("GET /runs/{id}", s.handleRunPage)
}

func (s *Server) handleRunPage(w http.ResponseWriter, r *http.Request) {
	id, isCSV := strings.CutSuffix(r.PathValue("id"), ".csv")
	run, ok := s.getRun(w, r, "id", id)
	if !ok {
		return
	}
	if isCSV {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="wasmgap-run-%d.csv"`, run.ID))
		writeRunCSV(w, run)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := runPageTemplate.Execute(w, viewRun(run)); err != nil {
		// The header is sent: the page ends where it failed.
		fmt.Fprintf(w, "<p>the page failed: %s</p>", template.HTMLEscapeString(err.Error()))
	}
}

// writeRunCSV writes one line per cell, the times in nanoseconds.
func writeRunCSV(w http.ResponseWriter, run results.Run) {
	c := csv.NewWriter(w)
	_ = c.Write([]string{"kernel", "args", "engine", "median_ns", "ci_lo_ns", "ci_hi_ns", "min_ns", "max_ns", "samples", "calls", "value", "failure"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, r := range run.Report.Results {
		args := make([]string, len(r.Args))
		for i, a := range r.Args {
			args[i] = strconv.Itoa(a)
		}
		_ = c.Write([]string{r.Kernel, strings.Join(args, " "), r.Engine, f(r.Median), f(r.CI.Lo), f(r.CI.Hi), f(r.Min), f(r.Max),
			strconv.Itoa(r.Runs), strconv.Itoa(r.Calls), strconv.FormatInt(r.Value, 10), r.Failure})
	}
	c.Flush()
}

// engineTitle returns an engine's title and colour as the page shows them.
func engineTitle(name string) (string, string) {
	for _, i := range engine.Infos() {
		if i.Name == name {
			return i.Title, i.Color
		}
	}
	return name, "#888888"
}

func viewRun(run results.Run) runView {
	rep := run.Report
	v := runView{ID: run.ID, JSON: fmt.Sprintf("/api/results/%d", run.ID), CSV: fmt.Sprintf("/runs/%d.csv", run.ID)}
	var labels []string
	cells := map[[2]string]measure.Result{}
	var engines []string
	for _, r := range rep.Results {
		l := r.Label()
		if !slices.Contains(labels, l) {
			labels = append(labels, l)
		}
		if !slices.Contains(engines, r.Engine) {
			engines = append(engines, r.Engine)
		}
		cells[[2]string{l, r.Engine}] = r
	}
	rank := map[string]int{}
	for _, i := range engine.Infos() {
		rank[i.Name] = i.Rank
	}
	slices.SortStableFunc(engines, func(a, b string) int { return rank[a] - rank[b] })
	for _, e := range engines {
		t, c := engineTitle(e)
		v.Engines = append(v.Engines, engineView{Name: e, Title: t, Color: c})
	}
	v.Title = fmt.Sprintf("Run %d: %s on %s", run.ID, strings.Join(labels, ", "), plural(len(engines), "engine"))
	v.When = run.Created.Format("2006-01-02 15:04 UTC")
	v.Who = map[string]string{results.SourceCLI: "wasmgap bench", results.SourceServer: "the playground's server", results.SourceBrowser: "a browser, shared from the playground"}[run.Source]
	if run.Browser.Name != "" {
		v.Who += " (" + strings.TrimSpace(run.Browser.Name+" "+run.Browser.Version) + ")"
	}
	// The chart: one bar per cell, on a log scale from the fastest to the slowest median.
	lo, hi := math.Inf(1), 0.0
	for _, r := range rep.Results {
		if r.Failure == "" && r.Median > 0 {
			lo, hi = min(lo, r.Median), max(hi, r.Median)
		}
	}
	y := 0
	for _, l := range labels {
		row := rowView{Label: l}
		v.Bars = append(v.Bars, barView{Y: y, Label: l, Header: true})
		y += 22
		baseline := report.Baseline("", func(e string) bool {
			c, ok := cells[[2]string{l, e}]
			return ok && c.Failure == "" && c.Median > 0
		})
		if v.Baseline == "" {
			v.Baseline = baseline
		}
		for _, e := range engines {
			t, color := engineTitle(e)
			r, ok := cells[[2]string{l, e}]
			if !ok {
				row.Cells = append(row.Cells, cellView{Engine: e, Label: t, Empty: true})
				continue
			}
			c := cellView{Engine: e, Label: t, Title: r.Failure}
			bar := barView{Y: y, Label: t, Color: color}
			y += 20
			if r.Failure != "" {
				c.Failure = failureKind(r.Failure)
				bar.Failed, bar.Text = true, c.Failure
			} else {
				c.Median = report.FormatNs(r.Median)
				c.Spread = report.Spread(r)
				if e == baseline {
					c.Ratio = "×1"
				} else if x, ok := report.BaseRatio(r, cells[[2]string{l, baseline}]); ok && baseline != "" {
					c.Ratio = report.FormatRatio(x.X)
					if ci := report.FormatRatioInterval(x); ci != "" {
						c.Ratio += " (" + ci + ")"
					}
				}
				calls, noun := max(r.Calls, 1), "calls"
				if calls == 1 {
					noun = "call"
				}
				c.Note = fmt.Sprintf("%s, k = %s %s a sample", plural(r.Runs, "sample"), report.Grouped(strconv.Itoa(calls)), noun)
				bar.Text = c.Median
				bar.Width = 12
				if hi > lo {
					bar.Width = 12 + int(468*math.Log(r.Median/lo)/math.Log(hi/lo))
				}
			}
			row.Cells = append(row.Cells, c)
			v.Bars = append(v.Bars, bar)
		}
		v.Rows = append(v.Rows, row)
	}
	v.ChartHeight = y + 4
	m := rep.Method
	v.Method = [][2]string{{"timed samples per cell", strconv.Itoa(m.Runs)}, {"warm-up calls", strconv.Itoa(m.Warmup)}}
	if m.WarmupTime > 0 {
		v.Method = append(v.Method, [2]string{"warm-up lasts at least", report.FormatDuration(m.WarmupTime)})
	}
	switch {
	case m.MinSample > 0:
		v.Method = append(v.Method, [2]string{"a sample lasts at least", report.FormatDuration(m.MinSample)})
	case m.MinSample < 0:
		v.Method = append(v.Method, [2]string{"a sample", "one call"})
	}
	if m.Timeout > 0 {
		v.Method = append(v.Method, [2]string{"time limit per cell", report.FormatDuration(m.Timeout)})
	}
	if m.Timing != "" {
		v.Method = append(v.Method, [2]string{"timing", m.Timing})
	}
	e := rep.Environment
	v.Env = [][2]string{{"CPU", e.CPU}, {"cores", strconv.Itoa(e.Cores)}, {"OS", e.OS + "/" + e.Arch}, {"Go", e.Go}, {"wasmgap", run.Wasmgap}}
	if e.GOMAXPROCS > 0 {
		v.Env = append(v.Env, [2]string{"GOMAXPROCS", strconv.Itoa(e.GOMAXPROCS)})
	}
	for _, k := range slices.Sorted(mapsKeys(e.Modules)) {
		v.Env = append(v.Env, [2]string{k, e.Modules[k]})
	}
	for _, rt := range e.Runtimes {
		t, _ := engineTitle(rt.Engine)
		v.Env = append(v.Env, [2]string{t, rt.Version})
	}
	if run.Browser.UserAgent != "" {
		v.Env = append(v.Env, [2]string{"browser", run.Browser.UserAgent})
	}
	v.Playground = playgroundLink(rep, engines)
	return v
}

// plural renders "1 call", "5 calls".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// playgroundLink is the playground's address with the run's selection: its kernels with
// their (first) arguments, its engines and its method.
func playgroundLink(rep report.Report, engines []string) string {
	q := url.Values{}
	var names []string
	for _, r := range rep.Results {
		if slices.Contains(names, r.Kernel) {
			continue
		}
		names = append(names, r.Kernel)
		if k, err := kernels.Lookup(r.Kernel); err == nil {
			for i, p := range k.Params {
				if i < len(r.Args) {
					q.Set(r.Kernel+"."+p.Name, strconv.Itoa(r.Args[i]))
				}
			}
		}
	}
	q.Set("k", strings.Join(names, ","))
	q.Set("e", strings.Join(engines, ","))
	m := rep.Method
	q.Set("runs", strconv.Itoa(m.Runs))
	q.Set("warmup", strconv.Itoa(m.Warmup))
	ms := func(d time.Duration) string { return strconv.FormatInt(max(int64(d/time.Millisecond), 0), 10) }
	if m.MinSample != 0 {
		q.Set("min_sample_ms", ms(m.MinSample))
	}
	if m.WarmupTime != 0 {
		q.Set("warmup_ms", ms(m.WarmupTime))
	}
	return "/?" + strings.ReplaceAll(q.Encode(), "%2C", ",")
}
