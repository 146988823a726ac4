package playground

import (
	"context"
	"log"
	"sync"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/internal/runner"
)

// One Run of the page is many POST /api/run requests, one per cell, each naming the
// page's Run by a batch: a random name the page draws for each Run. The first cell of
// a batch is stored as a new run and the next ones are appended to it, so that one Run
// is one stored run with all its server cells, whatever became of the page meanwhile.

// Bounds of the batches remembered.
const (
	// batchAge is how long a batch stays open after its last cell.
	batchAge = time.Hour
	// maxBatches bounds the batches remembered at once.
	maxBatches = 4096
	// minBatch and maxBatch bound a batch's length: random enough not to be guessed,
	// short enough to keep.
	minBatch, maxBatch = 16, 64
)

// pageRuns maps each open batch to its stored run; its zero value is empty.
type pageRuns struct {
	mu sync.Mutex
	m  map[string]*pageRun
}

// pageRun is one batch's stored run; its mutex orders the batch's saves.
type pageRun struct {
	mu   sync.Mutex
	id   int64
	env  report.Environment
	last time.Time
}

// checkBatch says what is wrong with a run request's batch, if anything.
func checkBatch(b string) *apiError {
	if b == "" {
		return nil
	}
	ok := len(b) >= minBatch && len(b) <= maxBatch
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			ok = false
		}
	}
	if !ok {
		return &apiError{Error: "batch must be 16 to 64 letters, digits, '-' or '_' (a random name for one Run of the page), or absent", Field: "batch"}
	}
	return nil
}

// get returns the batch's entry, made on first use; batches idle past batchAge are
// forgotten, and all of them past maxBatches (a bound, not an eviction policy).
func (p *pageRuns) get(batch string, now time.Time) *pageRun {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil || len(p.m) >= maxBatches {
		p.m = map[string]*pageRun{}
	}
	for k, r := range p.m {
		if now.Sub(r.last) > batchAge {
			delete(p.m, k)
		}
	}
	r := p.m[batch]
	if r == nil {
		r = &pageRun{}
		p.m[batch] = r
	}
	r.last = now
	return r
}

// savePageCell stores a cell the server measured for the page: as a run of its own
// without a batch, else in its batch's run. It returns the run's id (0 when nothing is
// stored: no store, a user's kernel, or a failed save, logged).
func (s *Server) savePageCell(batch string, job runner.Job, res measure.Result, env report.Environment) int64 {
	if batch == "" || s.opts.Results == nil || job.Custom() != nil {
		return s.saveServerCell(job, res, env)
	}
	env.Time = time.Now().UTC().Truncate(time.Second)
	r := s.pageRuns.get(batch, time.Now())
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.id == 0 {
		r.id = s.saveServerCell(job, res, env)
		r.env = env
		return r.id
	}
	// A Run whose browser cells came first holds a browser's environment: the server's
	// cell brings the server's.
	base := r.env
	if base.Go == "" {
		base = env
	}
	merged := base.WithRuntimes([]measure.Result{res})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.opts.Results.Append(ctx, r.id, []measure.Result{res}, merged); err != nil {
		log.Printf("playground: store a cell in run %d: %v", r.id, err)
		return 0
	}
	r.env = merged
	return r.id
}

// savePageBrowserCells stores a Run's browser cells (run, as the share route made it) in
// its batch's run: appended when the server's cells made it, else saved as a new run that
// the batch's next cells join. It returns the run's id.
func (s *Server) savePageBrowserCells(ctx context.Context, batch string, run results.Run) (int64, error) {
	r := s.pageRuns.get(batch, time.Now())
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.id == 0 {
		id, err := s.opts.Results.Save(ctx, run)
		if err != nil {
			return 0, err
		}
		r.id, r.env = id, run.Report.Environment
		return id, nil
	}
	merged := r.env.WithRuntimes(run.Report.Results)
	if err := s.opts.Results.Append(ctx, r.id, run.Report.Results, merged); err != nil {
		return 0, err
	}
	r.env = merged
	return r.id, nil
}
