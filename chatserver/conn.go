package chatserver

import (
	"sync"
	"sync/atomic"
)

// conn is one open stream (an SSE response or a WebSocket) of one user.
// The hub owns its membership and appends events to its queue; the stream's
// writer takes all waiting events at once (one wake-up per batch, however
// many events). When the queue holds max events the hub cuts the stream:
// sets reason, closes cut, and drops every later event for it (the client
// resumes from the last id it received).
type conn struct {
	nick   string
	max    int
	mu     sync.Mutex
	queue  []*event
	ready  chan struct{} // holds a token while queue is not empty
	cut    chan struct{}
	reason atomic.Pointer[string]
	isCut  bool // under mu
}

func newConn(nick string, queueSize int) *conn {
	return &conn{nick: nick, max: queueSize, ready: make(chan struct{}, 1), cut: make(chan struct{})}
}

// push queues ev for the writer; false when the queue is full.
func (c *conn) push(ev *event) bool {
	c.mu.Lock()
	if c.isCut {
		c.mu.Unlock()
		return true // dropped: the stream is ending
	}
	if len(c.queue) >= c.max {
		c.mu.Unlock()
		return false
	}
	c.queue = append(c.queue, ev)
	c.mu.Unlock()
	select {
	case c.ready <- struct{}{}:
	default:
	}
	return true
}

// take returns the waiting events and leaves spare (emptied) as the queue.
func (c *conn) take(spare []*event) []*event {
	c.mu.Lock()
	evs := c.queue
	c.queue = spare[:0]
	c.mu.Unlock()
	return evs
}

// cutWith closes the stream for reason (the first reason given wins).
func (c *conn) cutWith(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isCut {
		return
	}
	c.isCut = true
	c.reason.Store(&reason)
	close(c.cut)
}

// cutReason is why the hub closed the stream, or "" while it is open.
func (c *conn) cutReason() string {
	if p := c.reason.Load(); p != nil {
		return *p
	}
	return ""
}
