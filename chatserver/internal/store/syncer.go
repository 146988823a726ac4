package store

import "sync/atomic"

// Syncer syncs the log behind the writer: the writer hands it each batch
// once written (After), with what waits for that batch to be on disk, and
// goes on with the next batch while the sync runs, so the time of one sync
// is spent building the next batch and one sync can cover several. One
// goroutine syncs and runs the waiting functions, in the order handed.
// Once a sync failed, every later batch fails with the same error: what
// was written after an unsynced record cannot be vouched for either.
type Syncer struct {
	s      *Store
	queue  chan syncJob
	done   chan struct{}
	handed atomic.Int64 // jobs handed to the goroutine and not yet run
}

// syncJob is a batch waiting for its sync (end > 0), a batch that wrote
// nothing (end 0), or a barrier (then only).
type syncJob struct {
	end  int64
	then func(err error)
}

// NewSyncer starts the goroutine that syncs s's log. Close stops it.
func NewSyncer(s *Store) *Syncer {
	y := &Syncer{s: s, queue: make(chan syncJob, 64), done: make(chan struct{})}
	go y.run()
	return y
}

// After calls then once the log is synced up to end (what Write
// returned; 0 for a batch that waits for nothing), with nil, or with the
// sync's error. then runs after the functions handed before it: on the
// syncer's goroutine, or at once on the caller's when the log is synced up
// to end already (or not synced at all) and nothing handed before it still
// waits. It must not wait on the writer.
func (y *Syncer) After(end int64, then func(err error)) {
	if y.handed.Load() == 0 && y.Synced(end) {
		// Nothing to wait for, nothing before it: run it here rather than
		// wake the goroutine (only the writer hands jobs, so none can
		// come in between).
		then(nil)
		return
	}
	y.handed.Add(1)
	y.queue <- syncJob{end: end, then: then}
}

// Synced reports whether the log is synced up to end (what Write
// returned), or not synced at all.
func (y *Syncer) Synced(end int64) bool {
	return y.s.wal.noSync || end <= y.s.wal.synced.Load()
}

// Drain returns once every batch handed so far is synced and its function
// has run (before a checkpoint).
func (y *Syncer) Drain() {
	ran := make(chan struct{})
	y.handed.Add(1)
	y.queue <- syncJob{then: func(error) { close(ran) }}
	<-ran
}

// Close runs what was handed, then stops the goroutine. Nothing may be
// handed after Close.
func (y *Syncer) Close() {
	close(y.queue)
	<-y.done
}

func (y *Syncer) run() {
	defer close(y.done)
	var failed error
	for job := range y.queue {
		if job.end > 0 && failed == nil {
			failed = y.s.SyncTo(job.end)
		}
		if job.end > 0 {
			job.then(failed)
		} else {
			job.then(nil)
		}
		y.handed.Add(-1)
	}
}
