package fastpath

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// Listener is a net.Listener for net/http that answers the plain page and
// send requests of the connections it accepts itself (see the package
// comment) and returns the rest from Accept.
type Listener struct {
	net.Listener
	app              App
	hosts            *httpguard.Hosts
	headerTimeout    time.Duration // to read a request's head
	idleTimeout      time.Duration // to wait for the next request of a keep-alive connection
	handoff          chan net.Conn // connections for net/http
	errc             chan struct{} // closed when accepting failed
	acceptErr        error         // set before errc is closed
	done             chan struct{}
	closeOnce        sync.Once
	mu               sync.Mutex
	conns            map[net.Conn]struct{} // served here, not handed over
	closing          bool                  // under mu
	serving          sync.WaitGroup
	acceptLoopExited chan struct{}
}

// Options are a Listener's settings.
type Options struct {
	// Hosts are the Host names answered here; a request for another goes to
	// net/http, whose Host check refuses it.
	Hosts *httpguard.Hosts
	// HeaderTimeout bounds the reading of a request's head; IdleTimeout the
	// wait for the next request of a keep-alive connection (0: none), as
	// http.Server's ReadHeaderTimeout and IdleTimeout do.
	HeaderTimeout, IdleTimeout time.Duration
}

var pageBuffers = sync.Pool{New: func() any { b := make([]byte, MaxRequest); return &b }}

// NewListener accepts from ln, answering for app. Serve net/http on it;
// Close it, then Wait for the connections it serves itself.
func NewListener(ln net.Listener, app App, o Options) *Listener {
	l := &Listener{
		Listener: ln, app: app, hosts: o.Hosts, headerTimeout: o.HeaderTimeout, idleTimeout: o.IdleTimeout,
		handoff: make(chan net.Conn), errc: make(chan struct{}), done: make(chan struct{}),
		conns: map[net.Conn]struct{}{}, acceptLoopExited: make(chan struct{}),
	}
	go l.acceptLoop()
	return l
}

func (l *Listener) acceptLoop() {
	defer close(l.acceptLoopExited)
	var backoff time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if isTemporary(err) {
				// Out of file descriptors and the like: wait, as net/http does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				select {
				case <-time.After(backoff):
					continue
				case <-l.done:
					return
				}
			}
			l.acceptErr = err
			close(l.errc)
			return
		}
		backoff = 0
		l.mu.Lock()
		if l.closing {
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.conns[c] = struct{}{}
		l.serving.Add(1)
		l.mu.Unlock()
		bp := pageBuffers.Get().(*[]byte)
		if n, done := l.answerAtOnce(c, *bp); done {
			pageBuffers.Put(bp)
			l.serving.Done()
		} else {
			go l.serve(c, bp, n)
		}
	}
}

// answerAtOnce answers, on the accepting goroutine, a connection whose
// first bytes, already there, are a page request that closes it (ab, or
// `wasmgap load --no-keepalive`): one read, one write and a close, without
// a goroutine, a wake-up or a deadline. Otherwise it returns the bytes it
// read into buf for serve, done false; it never waits.
func (l *Listener) answerAtOnce(c net.Conn, buf []byte) (n int, done bool) {
	n, wouldBlock, err := readNow(c, buf)
	switch {
	case wouldBlock || errors.Is(err, errors.ErrUnsupported):
		return 0, false
	case err != nil || n == 0:
		l.release(c)
		c.Close()
		return 0, true
	}
	req, verdict := ParseRequest(buf[:n], l.hosts)
	if verdict != Serve || !req.CloseAfter || req.Length != n {
		return n, false
	}
	out, head := l.app.Page(&req)
	if req.Head {
		out = out[:head]
	}
	written, _, err := writeNow(c, out)
	if err != nil || written == len(out) {
		l.release(c)
		c.Close()
		return 0, true
	}
	// The socket's buffer is full (a client that does not read): the rest
	// is written under a deadline, on a goroutine of its own (which the
	// listener waits for, as for serve).
	l.serving.Add(1)
	go func() {
		defer l.serving.Done()
		c.SetWriteDeadline(deadlineIn(l.headerTimeout))
		c.Write(out[written:])
		l.release(c)
		c.Close()
	}()
	return 0, true
}

func isTemporary(err error) bool {
	t, ok := err.(interface{ Temporary() bool })
	return ok && t.Temporary()
}

// Accept returns the next connection for net/http.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.handoff:
		return c, nil
	case <-l.errc:
		return nil, l.acceptErr
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting and ends the connections served here: an idle one
// at once, one being answered once its answer is written.
func (l *Listener) Close() error {
	var err error
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closing = true
		for c := range l.conns {
			c.SetReadDeadline(time.Now())
		}
		l.mu.Unlock()
		close(l.done)
		err = l.Listener.Close()
	})
	return err
}

// Wait waits until the connections served here have ended or been handed
// over (after Close).
func (l *Listener) Wait() {
	<-l.acceptLoopExited
	l.serving.Wait()
}

func (l *Listener) isClosing() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closing
}

// release forgets c; false when the listener is closing (c must close).
func (l *Listener) release(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.conns, c)
	return !l.closing
}

// serve answers c's page requests until it closes or sends another
// request; *bp holds the first n bytes read.
func (l *Listener) serve(c net.Conn, bp *[]byte, n int) {
	defer l.serving.Done()
	buf := *bp
	defer pageBuffers.Put(bp)
	var answer []byte // a send's answer, built here
	start, end, served := 0, n, 0
	// The deadline moves only when its kind changes or a second has passed:
	// each move is a timer update.
	var deadlineSet time.Time
	deadlineIdle := false
	for {
		req, verdict := ParseRequest(buf[start:end], l.hosts)
		var out []byte
		switch verdict {
		case Serve:
			var head int
			out, head = l.app.Page(&req)
			if req.Head {
				out = out[:head]
			}
		case Send:
			req.Remote = c.RemoteAddr().String()
			reply, sent := l.app.Send(&req)
			if !sent {
				verdict = HandOff // refused before sending: net/http's answer
				break
			}
			out = appendReply(answer[:0], req.Form, reply, time.Now())
			answer = out
			if now := time.Now(); sent && !deadlineSet.IsZero() && now.Sub(deadlineSet) > time.Second {
				// A slow send (a store stalled) must not leave its answer
				// under a deadline that has nearly run out: net/http
				// writes it with none.
				c.SetDeadline(deadlineIn(l.headerTimeout))
				deadlineSet, deadlineIdle = now, false
			}
		}
		switch verdict {
		case Serve, Send:
			if _, err := c.Write(out); err != nil {
				l.release(c)
				c.Close()
				return
			}
			served++
			start += req.Length
			if start == end {
				start, end = 0, 0
			}
			if req.CloseAfter {
				l.release(c)
				if start < end {
					// More was sent: closing now could reset the
					// connection before the client read the answer.
					lingeringClose(c)
				} else {
					c.Close()
				}
				return
			}
			if l.isClosing() {
				l.release(c)
				c.Close()
				return
			}
			continue
		case HandOff:
			var pending []byte
			if end > start {
				pending = bytes.Clone(buf[start:end])
			}
			if !l.release(c) {
				c.Close()
				return
			}
			if !deadlineSet.IsZero() {
				// net/http sets its read deadlines but, without a
				// WriteTimeout, no write deadline: the answers it writes
				// must not meet the one set here.
				c.SetWriteDeadline(time.Time{})
			}
			hc := net.Conn(c)
			if pending != nil {
				hc = &handedConn{Conn: c, pending: pending}
			}
			select {
			case l.handoff <- hc:
			case <-l.done:
				c.Close()
			}
			return
		}
		// NeedMore
		if start > 0 {
			end = copy(buf, buf[start:end])
			start = 0
		}
		idle := end == 0 && served > 0
		now := time.Now()
		if idle != deadlineIdle || now.Sub(deadlineSet) > time.Second {
			timeout := l.headerTimeout
			if idle {
				timeout = l.idleTimeout
			}
			c.SetDeadline(deadlineIn(timeout))
			deadlineSet, deadlineIdle = now, idle
			if l.isClosing() { // after the move: Close's deadline is not undone
				l.release(c)
				c.Close()
				return
			}
		}
		n, err := c.Read(buf[end:])
		if err != nil {
			l.release(c)
			c.Close()
			return
		}
		end += n
	}
}

// deadlineIn is the deadline timeout from now; none for a timeout of 0 or
// less (net/http's meaning of the http.Server's timeouts).
func deadlineIn(timeout time.Duration) time.Time {
	if timeout <= 0 {
		return time.Time{}
	}
	return time.Now().Add(timeout)
}

// lingeringClose ends a connection that has unread requests after an
// answer that closes it: it sends its end, then reads what the client still
// sends for a moment, so that closing does not reset the connection before
// the client has read the answer (as net/http does for every connection,
// and nginx for those with more to read).
func lingeringClose(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		var b [512]byte
		for {
			if _, err := c.Read(b[:]); err != nil {
				break
			}
		}
	}
	c.Close()
}

// handedConn is a connection handed to net/http with the bytes already
// read from it.
type handedConn struct {
	net.Conn
	pending []byte
}

func (c *handedConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		if len(c.pending) == 0 {
			c.pending = nil
		}
		return n, nil
	}
	return c.Conn.Read(p)
}

// CloseWrite lets net/http end a connection as it does a TCP one.
func (c *handedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}
