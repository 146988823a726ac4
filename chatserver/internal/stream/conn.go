// Package stream is one user's open stream, an SSE response or a
// WebSocket: its queue of events (Conn), each event encoded once for both
// transports (Event), the two transports (SSE and RawSSE,
// WS), the writer that runs a stream from its login to its end (Writer) and
// a user's streams on a node (Set).
//
// The hub never waits for a stream: it pushes an event onto the stream's
// queue and the stream's writer, a goroutine started only while there is
// something to write (Writer), writes everything waiting in one write. A
// full queue cuts the stream with its reason; the client resumes from the
// last id it received. What a stream writes first (its Plan) and which
// events it gets are the chat's rules', not this package's.
package stream

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// The reasons a stream is cut with, its last words to its client.
const (
	Slow         = "slow consumer: %d events waiting, the most a connection may queue; reconnect with the last event id received to resume"
	SlowAddr     = "slow consumer: the streams of this client address hold %s; reconnect with the last event id received to resume"
	ShuttingDown = "the chat server is shutting down; reconnect with the last event id received to resume"
	Closed       = "closed" // its client went, or its login ended
)

// Conn is one open stream (an SSE response or a WebSocket) of one user.
// The hub owns its membership and appends events to its queue; the stream's
// writer takes all waiting events at once (one wake-up per batch, however
// many events). When the queue holds max events the hub cuts the stream:
// sets reason, closes Gone, and drops every later event for it (the client
// resumes from the last id it received).
type Conn struct {
	Nick   string
	Max    int
	mu     sync.Mutex
	queue  []*Event
	budget Budget          // under mu: its address's bytes in queues and kernels (nil: none)
	held   int64           // under mu: the bytes of queue taken from budget
	wake   func(here bool) // under mu: called after an event is queued (here: PushHere's) and when the stream is cut
	Gone   chan struct{}
	reason atomic.Pointer[string]
	isCut  bool // under mu
}

func NewConn(nick string, queueSize int) *Conn {
	return &Conn{Nick: nick, Max: queueSize, Gone: make(chan struct{})}
}

// Budget is the bytes that the streams of one client address may hold
// queued in the server and the kernel together (quota.Bytes).
type Budget interface {
	// Take counts n more bytes; false (nothing counted) past the most.
	Take(n int64) bool
	// Give counts n bytes less.
	Give(n int64)
	// Rule says the most, for a cut stream's reason.
	Rule() string
}

// SetBudget makes the events queued from now on count against b, until
// DropBudget. A Push past b's most cuts the stream as a slow consumer.
func (c *Conn) SetBudget(b Budget) {
	c.mu.Lock()
	c.budget = b
	c.mu.Unlock()
}

// DropBudget gives back what the stream's queue holds of its budget, and
// stops counting: the stream ended.
func (c *Conn) DropBudget() {
	c.mu.Lock()
	b, held := c.budget, c.held
	c.budget, c.held = nil, 0
	c.mu.Unlock()
	if b != nil && held > 0 {
		b.Give(held)
	}
}

// OnWake sets what Push and PushHere call once an event is queued, and
// Cut once the stream is cut: its writer's wake-up, told whether the
// caller may write the events itself (PushHere). Events queued before it
// was set wait in the queue.
func (c *Conn) OnWake(f func(here bool)) {
	c.mu.Lock()
	c.wake = f
	c.mu.Unlock()
}

// Push queues ev for the writer. A stream whose queue already holds Max
// events is cut instead (Slow): the hub never waits for a stream, and
// the client resumes from the last id it received.
func (c *Conn) Push(ev *Event) { c.push(ev, false) }

// PushHere is Push for a caller that delivers a few events and may write
// them on its own goroutine: a stream whose writer is idle and whose
// events a writer loop would write (Loops) writes them at once, without
// waking a loop for them.
func (c *Conn) PushHere(ev *Event) { c.push(ev, true) }

func (c *Conn) push(ev *Event, here bool) {
	c.mu.Lock()
	if c.isCut {
		c.mu.Unlock()
		return // dropped: the stream is ending
	}
	if len(c.queue) >= c.Max {
		c.mu.Unlock()
		c.Cut(fmt.Sprintf(Slow, c.Max))
		return
	}
	if c.budget != nil {
		size := int64(max(len(ev.SSE), len(ev.WS)))
		if !c.budget.Take(size) {
			rule := c.budget.Rule()
			c.mu.Unlock()
			c.Cut(fmt.Sprintf(SlowAddr, rule))
			return
		}
		c.held += size
	}
	c.queue = append(c.queue, ev)
	wake := c.wake
	c.mu.Unlock()
	if wake != nil {
		wake(here)
	}
}

// Take returns the waiting events and leaves spare (emptied) as the queue.
func (c *Conn) Take(spare []*Event) []*Event {
	c.mu.Lock()
	evs := c.queue
	c.queue = spare[:0]
	b, held := c.budget, c.held
	c.held = 0
	c.mu.Unlock()
	if b != nil && held > 0 {
		b.Give(held) // in the kernel's buffer now, counted as the stream's reserve
	}
	return evs
}

// Queued reports how many events wait for the writer.
func (c *Conn) Queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// Cut closes the stream for reason (the first reason given wins).
func (c *Conn) Cut(reason string) {
	c.mu.Lock()
	if c.isCut {
		c.mu.Unlock()
		return
	}
	c.isCut = true
	c.reason.Store(&reason)
	close(c.Gone)
	wake := c.wake
	c.mu.Unlock()
	if wake != nil {
		wake(false)
	}
}

// CutAsSlow reports whether the stream was cut as a slow consumer.
func (c *Conn) CutAsSlow() bool {
	return strings.HasPrefix(c.CutReason(), Slow[:strings.IndexByte(Slow, ':')])
}

// CutReason is why the hub closed the stream, or "" while it is open.
func (c *Conn) CutReason() string {
	if p := c.reason.Load(); p != nil {
		return *p
	}
	return ""
}
