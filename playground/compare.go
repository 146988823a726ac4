package playground

import (
	"fmt"
	"math"
	"net/http"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
)

// POST /api/compare compares two runs' cells as `wasmgap compare` does: the one rule
// (report.CompareWith: the Mann–Whitney U test at α with benchstat's sample minimum) decides
// for the page too, so the page and the CLI never disagree on a change.

const (
	// maxCompareBody bounds a comparison request: two runs of up to maxCompareCells cells.
	maxCompareBody = 1 << 20
	// maxCompareCells bounds the cells of one side (every kernel on every engine is ~200).
	maxCompareCells = 2000
	// maxCompareSamples bounds one cell's samples (a run holds at most a few hundred).
	maxCompareSamples = 10000
)

// compareRequest is the body of POST /api/compare: the cells of two runs, as
// `wasmgap bench --format json` writes them (the fields the comparison reads), and α.
type compareRequest struct {
	Old   []compareCell `json:"old"`
	New   []compareCell `json:"new"`
	Alpha float64       `json:"alpha,omitempty"`
}

// compareCell is one cell of a run: measure.Result's JSON, the fields the comparison reads.
type compareCell struct {
	Kernel  string    `json:"kernel"`
	Args    []int     `json:"args"`
	Engine  string    `json:"engine"`
	Samples []float64 `json:"samples_ns"`
	Calls   int       `json:"calls,omitempty"`
	Failure string    `json:"failure,omitempty"`
}

// compareChange is one compared cell with its verdict as `wasmgap compare` prints it.
type compareChange struct {
	report.Change
	Verdict string `json:"verdict"`
}

// compareResponse is the answer of POST /api/compare.
type compareResponse struct {
	Changes []compareChange `json:"changes"`
	OnlyOld []string        `json:"only_old,omitempty"`
	OnlyNew []string        `json:"only_new,omitempty"`
	Alpha   float64         `json:"alpha"`
	// SamplesNeeded is the samples a side the U test needs to reach a p below Alpha.
	SamplesNeeded int `json:"samples_needed"`
}

const compareFields = `old and new (arrays of cells: {kernel, args, engine, samples_ns, calls, failure}), alpha (a number between 0 and 1, default 0.05)`

func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) {
	var req compareRequest
	if aerr := (jsonBody{route: "POST /api/compare", max: maxCompareBody, fields: compareFields}).decode(w, r, &req); aerr != nil {
		writeError(w, aerr.status, *aerr)
		return
	}
	old, aerr := compareSide("old", req.Old)
	if aerr == nil {
		var nw report.Report
		nw, aerr = compareSide("new", req.New)
		if aerr == nil {
			c, err := report.CompareWith(old, nw, report.CompareOptions{Alpha: req.Alpha})
			if err != nil {
				field := ""
				if req.Alpha != 0 && !(req.Alpha > 0 && req.Alpha < 1) {
					field = "alpha"
				}
				writeError(w, http.StatusBadRequest, apiError{Error: err.Error(), Field: field})
				return
			}
			resp := compareResponse{OnlyOld: c.OnlyOld, OnlyNew: c.OnlyNew, Alpha: c.Alpha, SamplesNeeded: report.SamplesNeeded(c.Alpha)}
			for _, ch := range c.Changes {
				resp.Changes = append(resp.Changes, compareChange{Change: ch, Verdict: ch.Verdict()})
			}
			writeJSON(w, http.StatusOK, resp)
			return
		}
	}
	writeError(w, http.StatusBadRequest, *aerr)
}

// compareSide checks one side's cells and makes them a report.
func compareSide(name string, cells []compareCell) (report.Report, *apiError) {
	switch {
	case len(cells) == 0:
		return report.Report{}, &apiError{Error: name + " has no cells: nothing to compare (the fields are " + compareFields + ")", Field: name}
	case len(cells) > maxCompareCells:
		return report.Report{}, &apiError{Error: fmt.Sprintf("%s has %d cells: at most %d", name, len(cells), maxCompareCells), Field: name}
	}
	rep := report.Report{Results: make([]measure.Result, len(cells))}
	for i, c := range cells {
		field := fmt.Sprintf("%s[%d]", name, i)
		if c.Kernel == "" || c.Engine == "" {
			return report.Report{}, &apiError{Error: field + " names no kernel or engine", Field: field}
		}
		if len(c.Samples) > maxCompareSamples {
			return report.Report{}, &apiError{Error: fmt.Sprintf("%s.samples_ns has %d samples: at most %d", field, len(c.Samples), maxCompareSamples), Field: field + ".samples_ns"}
		}
		for _, v := range c.Samples {
			if !(v > 0) || math.IsInf(v, 0) {
				return report.Report{}, &apiError{Error: fmt.Sprintf("%s.samples_ns holds %v: a sample is a positive number of nanoseconds per call", field, v), Field: field + ".samples_ns"}
			}
		}
		rep.Results[i] = measure.Result{Kernel: c.Kernel, Args: c.Args, Engine: c.Engine, Samples: c.Samples, Calls: c.Calls, Failure: c.Failure}
	}
	return rep, nil
}
