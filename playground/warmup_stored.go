package playground

import (
	"context"
	"errors"
	"log"
	"net/http"
	"strconv"
	"time"

	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/internal/warmup"
)

// GET /api/warmup/{id} answers a stored warm-up study (results.Study) as JSON: one that
// `wasmgap warmup` stored, or one the server ran for the page (its "result" event then
// carries the id).

// saveStudy stores a study the server ran for the page and returns its id: 0 when there is
// no store or the save failed (logged; the study is still answered).
func (s *Server) saveStudy(rep warmup.Report) int64 {
	if s.opts.Results == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, err := s.opts.Results.SaveStudy(ctx, results.NewStudy(results.SourceServer, rep))
	if err != nil {
		log.Printf("playground: store a warm-up study: %v", err)
		return 0
	}
	return id
}

func (s *Server) handleWarmupGet(w http.ResponseWriter, r *http.Request) {
	value := r.PathValue("id")
	id, err := strconv.ParseInt(value, 10, 64)
	if err != nil || id < 1 {
		writeError(w, http.StatusBadRequest, apiError{Error: "id must be a warm-up study's id (a positive integer): " + strconv.Quote(value) + " is not one", Field: "id"})
		return
	}
	if s.opts.Results == nil {
		writeError(w, http.StatusNotFound, apiError{Error: "no stored warm-up study " + value + ": this server keeps no results store", Field: "id"})
		return
	}
	st, err := s.opts.Results.Study(r.Context(), id)
	if errors.Is(err, results.ErrStudyNotFound) {
		writeError(w, http.StatusNotFound, apiError{Error: "no stored warm-up study " + value, Field: "id"})
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, apiError{Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, st)
}
