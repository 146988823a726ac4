package playground

import (
	"cmp"
	"net/http"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/internal/runner"
)

// forecastAnswer is the answer of POST /api/forecast: how long one cell is expected to
// take, from this machine's stored runs as `wasmgap bench` forecasts (runner.Estimate).
type forecastAnswer struct {
	// MS is the cell's expected time, worker and warm-up included, in milliseconds.
	MS int64 `json:"ms"`
	// Stored is true when this machine's stored runs of the cell's engine gave MS; false
	// for a guess (native's stored time of the kernel, or the method's least).
	Stored bool `json:"stored"`
}

// handleForecast answers POST /api/forecast: the body is a run request (POST /api/run's),
// checked as a run's is; nothing runs.
func (s *Server) handleForecast(w http.ResponseWriter, r *http.Request) {
	req, aerr := decodeRunRequest(w, r, "POST /api/forecast")
	if aerr != nil {
		writeError(w, cmp.Or(aerr.status, http.StatusBadRequest), *aerr)
		return
	}
	job, aerr := s.job(req)
	if aerr != nil {
		writeError(w, cmp.Or(aerr.status, http.StatusBadRequest), *aerr)
		return
	}
	var past map[string][]measure.Result
	if s.opts.Results != nil {
		past, _ = results.ForecastCells(r.Context(), s.opts.Results, results.MachineKey(s.env)) // a store that cannot be read only loses the stored times
	}
	d, stored := runner.Estimate(job, past, cmp.Or(job.Timeout(), s.limit()))
	writeJSON(w, http.StatusOK, forecastAnswer{MS: int64(d / time.Millisecond), Stored: stored})
}
