package playground

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/wasmgap/wasmgap/internal/results"
)

// A stored run's own page:
//
//	GET /runs/{id}      the run as a page: its table, chart, method and environment
//	GET /runs/{id}.csv  its cells as CSV (the JSON is GET /api/results/{id})

//go:embed runpage.html
var runPageHTML string

var runPageTemplate = template.Must(template.New("run").Parse(runPageHTML))

// runPage is what the run's page shell holds: the run's id, its machine's name and the
// bundle's files, whose script draws the run from GET /api/results/{id} with the
// playground's own table (no files: the bundle is not built, the page says so).
type runPage struct {
	ID      int64
	Machine string
	Files   map[string]string
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
	page := runPage{ID: run.ID, Machine: run.MachineName}
	if m, err := s.static.readManifest(); err == nil {
		page.Files = m.Files
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := runPageTemplate.Execute(w, page); err != nil {
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
