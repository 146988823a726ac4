package playground

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// queue is the one admission of the server's expensive work (runs, warm-up studies,
// builds of user kernels): at most slots at once, the others waiting, shared fairly
// between clients. A client (an address, clientOf) holds at most perRunning of the slots
// and perWaiting places in the line, so that one address cannot take the machine from
// the others; past its share, or past the line's max, enter refuses. The line is served
// by round: a client's first waiting place before any client's second, so that a newcomer
// waits behind the runs of other newcomers only; within a round, in the order of arrival.
type queue struct {
	mu         sync.Mutex
	slots      int
	max        int // most places that may wait
	perRunning int // slots one client may hold
	perWaiting int // places in the line one client may hold
	running    int
	waiting    []*ticket // in the order of arrival
	clients    map[string]*share
	// runs, when set, is told each time a measured run starts and ends (custom.Builder,
	// whose cache warm-up keeps out of runs' way); called with mu held.
	runs runWatcher
}

// share is what one client holds of the queue.
type share struct {
	running, waiting int
}

// work is what a place in the queue is for.
type work int

const (
	// measured is a run, a study or an explanation: the build cache's warm-up pauses
	// while one goes on (queue.runs).
	measured work = iota
	// building is a build of a user kernel, which does not pause the warm-up: a build
	// waits for it.
	building
)

// runWatcher is told when runs start and end.
type runWatcher interface {
	RunStarted()
	RunEnded()
}

// ticket is one place in the queue.
type ticket struct {
	q       *queue
	client  string
	work    work
	granted chan struct{} // closed when the work may start
	moved   chan struct{} // signalled when the ticket's position changed
	done    bool          // granted (under q.mu)
}

// queueFullError is enter's refusal: the line is full, or the client holds its share.
// Its text says which and what is allowed.
type queueFullError struct{ msg string }

func (e *queueFullError) Error() string { return e.msg }

// queueRetryAfter is the Retry-After, in seconds, of a refusal by the queue.
const queueRetryAfter = "10"

// refuse answers err, an error of enter, with 503 and Retry-After.
func refuse(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", queueRetryAfter)
	writeError(w, http.StatusServiceUnavailable, apiError{Error: err.Error()})
}

// admitWait bounds how long a request answered in one piece waits for its place (admit).
const admitWait = 15 * time.Second

// admit takes a place in the queue for r's client and waits for it, at most admitWait, for
// the routes that answer in one piece (builds, analyses of series): release gives the
// place back. ok is false when w was answered (503 with Retry-After: no place, or none
// came in time) or the client left.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, wk work) (release func(), ok bool) {
	t, err := s.queue.enter(clientOf(r), wk)
	if err != nil {
		refuse(w, err)
		return nil, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), admitWait)
	defer cancel()
	if err := t.wait(ctx, func(int) {}); err != nil {
		if r.Context().Err() == nil {
			refuse(w, fmt.Errorf("the server is busy: no place in the run queue came within %v; try again in a few seconds", admitWait))
		}
		return nil, false
	}
	return t.release, true
}

// newQueue returns a queue of slots places at once and max waiting. A client's share is
// half of the slots (rounded up: with one slot, one client may hold it) and a quarter of
// the line, at least one of each.
func newQueue(slots, max int) *queue {
	return &queue{slots: slots, max: max, perRunning: (slots + 1) / 2, perWaiting: cmp.Or(max/4, 1), clients: map[string]*share{}}
}

// enter takes a place for client's work: a slot at once when one is free and the client
// is under its share (the ticket is already granted), a place in the line otherwise. It
// fails with a *queueFullError when it would wait and the line is full or the client
// holds its share of it.
func (q *queue) enter(client string, w work) (*ticket, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.clients[client]
	if c == nil {
		c = &share{}
	}
	t := &ticket{q: q, client: client, work: w, granted: make(chan struct{}), moved: make(chan struct{}, 1)}
	// No waiting ticket may start (dispatch leaves none that may), so a free slot is
	// this one's when its client is under its share.
	if q.running < q.slots && c.running < q.perRunning {
		q.clients[client] = c
		q.grant(t)
		return t, nil
	}
	if len(q.waiting) >= q.max {
		return nil, &queueFullError{fmt.Sprintf("the run queue is full (%d runs waiting for %d slots): try again later", q.max, q.slots)}
	}
	if c.waiting >= q.perWaiting {
		return nil, &queueFullError{fmt.Sprintf("this address has %d runs running and %d waiting, its share of the run queue (%d running and %d waiting of %d slots and %d places): try again when one ends", c.running, c.waiting, q.perRunning, q.perWaiting, q.slots, q.max)}
	}
	q.clients[client] = c
	c.waiting++
	q.waiting = append(q.waiting, t)
	q.notify()
	return t, nil
}

// grant starts t (q.mu held).
func (q *queue) grant(t *ticket) {
	q.running++
	q.clients[t.client].running++
	t.done = true
	close(t.granted)
	if t.work == measured && q.runs != nil {
		q.runs.RunStarted()
	}
}

// order is the line as it will be served (q.mu held): by round, a ticket's round being
// the slots its client holds plus the client's tickets waiting ahead of it, then by
// arrival.
func (q *queue) order() []*ticket {
	type placed struct {
		t     *ticket
		round int
	}
	ahead := map[string]int{}
	line := make([]placed, len(q.waiting))
	for i, t := range q.waiting {
		line[i] = placed{t, q.clients[t.client].running + ahead[t.client]}
		ahead[t.client]++
	}
	slices.SortStableFunc(line, func(a, b placed) int { return cmp.Compare(a.round, b.round) })
	out := make([]*ticket, len(line))
	for i, p := range line {
		out[i] = p.t
	}
	return out
}

// dispatch starts waiting tickets while a slot is free and the first of the line's order
// is under its client's share (q.mu held). A first one at its share means every client
// that waits is at its share: the slot stays free for another client.
func (q *queue) dispatch() {
	moved := false
	for q.running < q.slots && len(q.waiting) > 0 {
		next := q.order()[0]
		if q.clients[next.client].running >= q.perRunning {
			break
		}
		q.take(next)
		q.grant(next)
		moved = true
	}
	if moved {
		q.notify()
	}
}

// take removes a waiting ticket from the line (q.mu held).
func (q *queue) take(t *ticket) {
	i := slices.Index(q.waiting, t)
	if i < 0 {
		return
	}
	q.waiting = slices.Delete(q.waiting, i, i+1)
	q.clients[t.client].waiting--
}

// forget drops client's share once it holds nothing (q.mu held).
func (q *queue) forget(client string) {
	if c := q.clients[client]; c != nil && c.running == 0 && c.waiting == 0 {
		delete(q.clients, client)
	}
}

// position is the ticket's place in the line's order (1 = next to start), 0 once granted.
func (t *ticket) position() int {
	t.q.mu.Lock()
	defer t.q.mu.Unlock()
	return slices.Index(t.q.order(), t) + 1
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
			if err := ctx.Err(); err != nil {
				// Granted as the client left: hand the slot on.
				t.release()
				return err
			}
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
			t.q.take(t)
			t.q.forget(t.client)
			t.q.notify()
			t.q.mu.Unlock()
			return ctx.Err()
		}
	}
}

// release frees the ticket's slot for the line.
func (t *ticket) release() {
	q := t.q
	q.mu.Lock()
	defer q.mu.Unlock()
	if t.work == measured && q.runs != nil {
		q.runs.RunEnded()
	}
	q.running--
	q.clients[t.client].running--
	q.forget(t.client)
	q.dispatch()
	q.notify()
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
