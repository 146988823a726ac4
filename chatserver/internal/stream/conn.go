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
	"sync"
	"sync/atomic"
)

// The reasons a stream is cut with, its last words to its client.
const (
	Slow         = "slow consumer: %d events waiting, the most a connection may queue; reconnect with the last event id received to resume"
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
	wake   func() // under mu: called after an event is queued and when the stream is cut
	Gone   chan struct{}
	reason atomic.Pointer[string]
	isCut  bool // under mu
}

func NewConn(nick string, queueSize int) *Conn {
	return &Conn{Nick: nick, Max: queueSize, Gone: make(chan struct{})}
}

// OnWake sets what Push calls once an event is queued, and Cut once the
// stream is cut: its writer's wake-up. Events queued before it was set
// wait in the queue.
func (c *Conn) OnWake(f func()) {
	c.mu.Lock()
	c.wake = f
	c.mu.Unlock()
}

// Push queues ev for the writer. A stream whose queue already holds Max
// events is cut instead (Slow): the hub never waits for a stream, and
// the client resumes from the last id it received.
func (c *Conn) Push(ev *Event) {
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
	c.queue = append(c.queue, ev)
	wake := c.wake
	c.mu.Unlock()
	if wake != nil {
		wake()
	}
}

// Take returns the waiting events and leaves spare (emptied) as the queue.
func (c *Conn) Take(spare []*Event) []*Event {
	c.mu.Lock()
	evs := c.queue
	c.queue = spare[:0]
	c.mu.Unlock()
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
		wake()
	}
}

// CutReason is why the hub closed the stream, or "" while it is open.
func (c *Conn) CutReason() string {
	if p := c.reason.Load(); p != nil {
		return *p
	}
	return ""
}
