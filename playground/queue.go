package playground

import (
	"context"
	"errors"
	"sync"
)

// errQueueFull is returned by queue.enter when as many runs wait as the queue holds.
var errQueueFull = errors.New("queue full")

// queue admits at most slots runs at once and keeps the others waiting in order, so that
// heavy runs never compete for the same CPU and every waiting run knows its position.
type queue struct {
	mu      sync.Mutex
	slots   int
	max     int // most runs that may wait
	running int
	waiting []*ticket
	// runs, when set, is told each time a run starts and ends (custom.Builder, whose
	// cache warm-up keeps out of runs' way); called with mu held.
	runs runWatcher
}

// runWatcher is told when runs start and end.
type runWatcher interface {
	RunStarted()
	RunEnded()
}

// started and ended tell q.runs (q.mu held).
func (q *queue) started() {
	if q.runs != nil {
		q.runs.RunStarted()
	}
}

func (q *queue) ended() {
	if q.runs != nil {
		q.runs.RunEnded()
	}
}

// ticket is one run's place in the queue.
type ticket struct {
	q       *queue
	granted chan struct{} // closed when the run may start
	moved   chan struct{} // signalled when the ticket's position changed
	done    bool          // granted (under q.mu)
}

func newQueue(slots, max int) *queue {
	return &queue{slots: slots, max: max}
}

// enter takes a slot at once when one is free (the ticket is already granted), queues the
// run otherwise, and fails with errQueueFull when the waiting line is full.
func (q *queue) enter() (*ticket, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	t := &ticket{q: q, granted: make(chan struct{}), moved: make(chan struct{}, 1)}
	if q.running < q.slots && len(q.waiting) == 0 {
		q.running++
		t.done = true
		close(t.granted)
		q.started()
		return t, nil
	}
	if len(q.waiting) >= q.max {
		return nil, errQueueFull
	}
	q.waiting = append(q.waiting, t)
	return t, nil
}

// position is the ticket's place in the waiting line (1 = next to run), 0 once granted.
func (t *ticket) position() int {
	t.q.mu.Lock()
	defer t.q.mu.Unlock()
	for i, w := range t.q.waiting {
		if w == t {
			return i + 1
		}
	}
	return 0
}

// wait blocks until the ticket is granted, calling onPosition with each new position
// (starting with the current one), or until ctx ends, which gives the place up.
func (t *ticket) wait(ctx context.Context, onPosition func(int)) error {
	last := -1
	for {
		if p := t.position(); p != last && p > 0 {
			onPosition(p)
			last = p
		}
		select {
		case <-t.granted:
			return nil
		case <-t.moved:
		case <-ctx.Done():
			t.q.mu.Lock()
			if t.done {
				// Granted while giving up: hand the slot on.
				t.q.mu.Unlock()
				t.release()
				return ctx.Err()
			}
			t.q.remove(t)
			t.q.mu.Unlock()
			return ctx.Err()
		}
	}
}

// release frees the ticket's slot for the next waiting run.
func (t *ticket) release() {
	q := t.q
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ended()
	if len(q.waiting) == 0 {
		q.running--
		return
	}
	next := q.waiting[0]
	q.waiting = q.waiting[1:]
	next.done = true
	close(next.granted)
	q.started()
	q.notify()
}

// remove takes a waiting ticket out of the line (q.mu held).
func (q *queue) remove(t *ticket) {
	for i, w := range q.waiting {
		if w == t {
			q.waiting = append(q.waiting[:i:i], q.waiting[i+1:]...)
			q.notify()
			return
		}
	}
}

// notify tells every waiting ticket that its position may have changed (q.mu held).
func (q *queue) notify() {
	for _, w := range q.waiting {
		select {
		case w.moved <- struct{}{}:
		default:
		}
	}
}

// stats reports how many runs are running and waiting.
func (q *queue) stats() (running, waiting int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running, len(q.waiting)
}
