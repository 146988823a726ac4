package fastpath

import (
	"bytes"
	"container/list"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/nbio"
	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// Listener is a net.Listener for net/http that answers the plain page and
// send requests of the connections it accepts itself (see the package
// comment) and returns the rest from Accept.
type Listener struct {
	net.Listener
	acceptors     []*nbio.Acceptor // accept sockets outside Go's netpoller, one loop each (none: Accept)
	app           App
	hosts         *httpguard.Hosts
	headerTimeout time.Duration // to read a request's head
	idleTimeout   time.Duration // to wait for the next request of a keep-alive connection
	handoff       chan net.Conn // connections for net/http
	errc          chan struct{} // closed when accepting failed
	acceptErr     error         // set before errc is closed
	failOnce      sync.Once
	done          chan struct{}
	closeOnce     sync.Once
	mu            sync.Mutex
	conns         map[net.Conn]struct{} // served here, not handed over
	closing       bool                  // under mu
	maxPerAddr    int                   // open connections of one client address (0: unlimited)
	maxPerProxy   int                   // open connections of one trusted proxy (0: unlimited)
	proxy         func(netip.Addr) bool // a trusted proxy (nil: none)
	key           func(netip.Addr) netip.Addr
	perAddr       map[netip.Addr]int        // under mu: open connections by peer address
	maxConns      int                       // open connections of all addresses (0: unlimited)
	total         int                       // under mu: open connections
	evictable     map[netip.Addr]*list.List // under mu: each address's served connections, oldest first
	serving       sync.WaitGroup
	accepting     sync.WaitGroup // the accept loops
}

// Options are a Listener's settings.
type Options struct {
	// Hosts are the Host names answered here; a request for another goes to
	// net/http, whose Host check refuses it.
	Hosts *httpguard.Hosts
	// HeaderTimeout bounds the reading of a request's head, from its first
	// byte (a connection's first request: from the accept) to its end,
	// however its bytes trickle in; IdleTimeout the wait for the next
	// request of a keep-alive connection (0: none), as http.Server's
	// ReadHeaderTimeout and IdleTimeout do.
	HeaderTimeout, IdleTimeout time.Duration
	// MaxConnsPerAddr bounds the connections one client address has open
	// at once, served here or by net/http (0 or negative: unlimited). One
	// more is answered 429 and closed as it is accepted.
	MaxConnsPerAddr int
	// Proxy reports whether a peer is a trusted proxy (nil: none), whose
	// connections MaxConnsPerProxy bounds instead: it speaks for many
	// clients, which the App counts by what the proxy says.
	Proxy            func(netip.Addr) bool
	MaxConnsPerProxy int
	// Key is what a peer's connections are counted under (nil: its
	// address; the chat's: an IPv6 address's network, httpguard's
	// Proxies.KeyAddr). A trusted proxy is counted under its address.
	Key func(netip.Addr) netip.Addr
	// MaxConns bounds the connections open at once, all addresses together
	// (0 or negative: unlimited): it keeps file descriptors for the rest of
	// the process. Past it, a new connection makes the address holding the
	// most give up its oldest (its slow or idle connections cannot starve
	// the others), or, when its own address holds the most, is answered 503
	// and closed, as it is accepted.
	MaxConns int
}

var pageBuffers = sync.Pool{New: func() any { b := make([]byte, MaxRequest); return &b }}

// NewListener accepts from ln, answering for app. Serve net/http on it;
// Close it, then Wait for the connections it serves itself.
func NewListener(ln net.Listener, app App, o Options) *Listener {
	l := &Listener{
		Listener: ln, acceptors: newAcceptors(ln), app: app, hosts: o.Hosts, headerTimeout: o.HeaderTimeout, idleTimeout: o.IdleTimeout,
		handoff: make(chan net.Conn), errc: make(chan struct{}), done: make(chan struct{}),
		conns:      map[net.Conn]struct{}{},
		maxPerAddr: max(o.MaxConnsPerAddr, 0), maxPerProxy: max(o.MaxConnsPerProxy, 0), proxy: o.Proxy, key: o.Key, perAddr: map[netip.Addr]int{},
		maxConns: max(o.MaxConns, 0), evictable: map[netip.Addr]*list.List{},
	}
	if len(l.acceptors) == 0 {
		l.accepting.Go(func() { l.acceptLoop(nil) })
	}
	for _, a := range l.acceptors {
		l.accepting.Go(func() { l.acceptLoop(a) })
	}
	return l
}

// newAcceptors makes an Acceptor of each TCP listener behind ln (both of
// localhost's); none when one of them cannot have one.
func newAcceptors(ln net.Listener) []*nbio.Acceptor {
	lns := []net.Listener{ln}
	if m, ok := ln.(*multiListener); ok {
		lns = m.lns
	}
	var acceptors []*nbio.Acceptor
	for _, ln := range lns {
		a, err := nbio.NewAcceptor(ln)
		if err != nil {
			for _, a := range acceptors {
				a.Close()
			}
			return nil
		}
		acceptors = append(acceptors, a)
	}
	return acceptors
}

// acceptLoop accepts from acceptor (nil: from the listener's Accept) until
// the listener is closed or accepting fails.
func (l *Listener) acceptLoop(acceptor *nbio.Acceptor) {
	var backoff time.Duration
	for {
		var err error
		if acceptor != nil {
			err = acceptor.AcceptEach(func(s *nbio.Socket) {
				backoff = 0
				l.accepted(s)
			})
		} else {
			var c net.Conn
			if c, err = l.Listener.Accept(); err == nil {
				backoff = 0
				l.accepted(connSocket{c})
				continue
			}
		}
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
		l.failOnce.Do(func() {
			l.acceptErr = err
			close(l.errc)
		})
		return
	}
}

// socket is a connection as accepted: an nbio.Socket, outside Go's
// netpoller, or a net.Conn where there is none (connSocket). What is not
// answered at once is served as a net.Conn (Conn).
type socket interface {
	Peer() netip.AddrPort
	ReadNow(buf []byte) (n int, wouldBlock bool, err error)
	WriteNow(p []byte) (n int, wouldBlock bool, err error)
	CloseWrite() error
	Close() error
	Conn() (net.Conn, error)
}

// accepted answers s at once (answerAtOnce), or serves it on a goroutine
// of its own, or refuses it (over its address's limit).
func (l *Listener) accepted(s socket) {
	addr := l.keyOf(s)
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		s.Close()
		return
	}
	var victim net.Conn
	if l.counting() {
		limit, proxy := l.limitOf(addr)
		if limit > 0 && l.perAddr[addr] >= limit {
			l.mu.Unlock()
			refuseConn(s, addr, limit, proxy)
			return
		}
		if l.maxConns > 0 && l.total >= l.maxConns {
			if victim = l.evict(addr); victim == nil {
				l.mu.Unlock()
				refuseFull(s, l.maxConns)
				return
			}
		}
		l.perAddr[addr]++
		l.total++
	}
	l.serving.Add(1)
	l.mu.Unlock()
	if victim != nil {
		victim.Close() // its count goes with it
	}
	bp := pageBuffers.Get().(*[]byte)
	n, done := l.answerAtOnce(s, *bp)
	if done {
		pageBuffers.Put(bp)
		l.serving.Done()
		return
	}
	c, err := s.Conn()
	if err != nil {
		l.uncount(addr)
		pageBuffers.Put(bp)
		l.serving.Done()
		return
	}
	l.mu.Lock()
	if l.counting() {
		cc := &countedConn{Conn: c, l: l, addr: addr}
		cc.elem = l.evictableOf(addr).PushBack(cc)
		c = cc
	}
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	go l.serve(c, bp, n)
}

// answerAtOnce answers a connection whose first bytes, already there, are
// a page request or a send that closes it (ab, or `wasmgap load
// --no-keepalive`), without a goroutine of its own: the page with one
// read, one write and a close on the accepting goroutine; a send the same
// way, its write and close made by whoever stores the post (App.Send's
// answer). Otherwise it returns the bytes it read into buf for serve, done
// false; it never waits.
func (l *Listener) answerAtOnce(s socket, buf []byte) (n int, done bool) {
	n, wouldBlock, err := s.ReadNow(buf)
	switch {
	case wouldBlock || errors.Is(err, errors.ErrUnsupported):
		return 0, false
	case err != nil || n == 0:
		l.finish(s)
		return 0, true
	}
	req, verdict := ParseRequest(buf[:n], l.hosts)
	if verdict != Serve && verdict != Send || !req.CloseAfter || req.Length != n {
		return n, false
	}
	if verdict == Send {
		req.Remote = s.Peer().String()
		form := req.Form
		l.serving.Add(1)
		if !l.app.Send(&req, func(r Reply) { l.answerAndClose(s, appendReply(nil, form, r, time.Now()), l.serving.Done) }) {
			l.serving.Done()
			return n, false // refused: net/http's answer, through serve
		}
		return 0, true
	}
	out, head := l.app.Page(&req)
	if req.Head {
		out = out[:head]
	}
	l.answerAndClose(s, out, func() {})
	return 0, true
}

// answerAndClose writes out to s, which it then closes, and calls done:
// at once when the socket takes out whole, as it nearly always does.
// Otherwise (a client that does not read) the rest is written under a
// deadline, on a goroutine of its own, which the listener waits for.
func (l *Listener) answerAndClose(s socket, out []byte, done func()) {
	written, _, err := s.WriteNow(out)
	if err != nil || written == len(out) {
		l.finish(s)
		done()
		return
	}
	l.serving.Add(1)
	go func() {
		defer l.serving.Done()
		defer done()
		addr := l.keyOf(s)
		c, err := s.Conn()
		if err != nil {
			l.uncount(addr)
			return
		}
		c.SetWriteDeadline(deadlineIn(l.headerTimeout))
		c.Write(out[written:])
		c.Close()
		l.uncount(addr)
	}()
}

// finish closes a connection answered at once.
func (l *Listener) finish(s socket) {
	s.Close()
	l.uncount(l.keyOf(s))
}

// keyOf is what s's connection is counted under (Options.Key).
func (l *Listener) keyOf(s socket) netip.Addr {
	a := s.Peer().Addr()
	if l.key == nil || l.proxy != nil && l.proxy(a) {
		return a
	}
	return l.key(a)
}

// counting reports whether open connections are counted (a limit is set).
func (l *Listener) counting() bool { return l.maxPerAddr > 0 || l.maxPerProxy > 0 || l.maxConns > 0 }

// limitOf is the most connections addr may have open (0: unlimited), and
// whether it is a trusted proxy's.
func (l *Listener) limitOf(addr netip.Addr) (limit int, proxy bool) {
	if l.proxy != nil && l.proxy(addr) {
		return l.maxPerProxy, true
	}
	return l.maxPerAddr, false
}

// uncount forgets one open connection of addr (MaxConnsPerAddr).
func (l *Listener) uncount(addr netip.Addr) {
	if !l.counting() {
		return
	}
	l.mu.Lock()
	l.uncountLocked(addr)
	l.mu.Unlock()
}

func (l *Listener) uncountLocked(addr netip.Addr) {
	if l.perAddr[addr]--; l.perAddr[addr] <= 0 {
		delete(l.perAddr, addr)
	}
	l.total--
}

// connSocket is a net.Conn as a socket.
type connSocket struct{ c net.Conn }

func (s connSocket) Peer() netip.AddrPort                  { return peerOf(s.c) }
func (s connSocket) ReadNow(buf []byte) (int, bool, error) { return nbio.ReadNow(s.c, buf) }
func (s connSocket) WriteNow(p []byte) (int, bool, error)  { return nbio.WriteNow(s.c, p) }
func (s connSocket) Close() error                          { return s.c.Close() }
func (s connSocket) Conn() (net.Conn, error)               { return s.c, nil }
func (s connSocket) CloseWrite() error {
	if cw, ok := s.c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
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
		for _, a := range l.acceptors {
			a.Close()
		}
		err = l.Listener.Close()
	})
	return err
}

// Wait waits until the connections served here have ended or been handed
// over (after Close).
func (l *Listener) Wait() {
	l.accepting.Wait()
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
	var answer []byte      // a send's answer, built here
	var replies chan Reply // a send's reply, from App.Send
	start, end, served := 0, n, 0
	// The deadline moves only when its kind changes (or, while idle, a
	// second has passed): each move is a timer update. A request whose head
	// comes in one read is answered under the idle deadline.
	const (
		noDeadline    = iota
		headDeadline  // headStart + headerTimeout: never moved while that head comes in
		idleDeadline  // deadlineSet + idleTimeout, moved at most once a second
		writeDeadline // deadlineSet + headerTimeout, for an answer
	)
	kind := noDeadline
	var deadlineSet, headStart time.Time
	// setDeadline moves the deadline; false when the listener is closing
	// (after the move: Close's deadline is not undone) and c must close.
	setDeadline := func(k int, from time.Time, timeout time.Duration) bool {
		at := time.Time{}
		if timeout > 0 {
			at = from.Add(timeout)
		}
		c.SetDeadline(at)
		kind, deadlineSet = k, from
		return !l.isClosing()
	}
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
			if replies == nil {
				replies = make(chan Reply, 1)
			}
			if !l.app.Send(&req, func(r Reply) { replies <- r }) {
				verdict = HandOff // refused before sending: net/http's answer
				break
			}
			out = appendReply(answer[:0], req.Form, <-replies, time.Now())
			answer = out
		}
		switch verdict {
		case Serve, Send:
			// An answer is not written under a deadline that has nearly run
			// out (net/http writes it with none): not that of a head that
			// came in pieces, nor one a slow send (a store stalled) used up.
			if now := time.Now(); kind == headDeadline || kind != noDeadline && verdict == Send && now.Sub(deadlineSet) > time.Second {
				if !setDeadline(writeDeadline, now, l.headerTimeout) {
					l.release(c)
					c.Close()
					return
				}
			}
			headStart = time.Time{}
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
			if kind != noDeadline {
				// net/http sets its read deadlines but, without a
				// WriteTimeout, no write deadline: the answers it writes
				// must not meet the one set here.
				c.SetWriteDeadline(time.Time{})
			}
			hc := net.Conn(c)
			if pending != nil {
				hc = &nbio.Prefixed{Conn: c, Pending: pending}
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
		now := time.Now()
		moved := true
		if end == 0 && served > 0 {
			// Idle between two requests.
			if kind != idleDeadline || now.Sub(deadlineSet) > time.Second {
				moved = setDeadline(idleDeadline, now, l.idleTimeout)
			}
		} else {
			// A head is coming (a connection's first one from the accept
			// on): its deadline is set once, from its start, so a client
			// sending a byte now and then cannot hold the connection.
			if headStart.IsZero() {
				headStart = now
			}
			if kind != headDeadline || !deadlineSet.Equal(headStart) {
				moved = setDeadline(headDeadline, headStart, l.headerTimeout)
			}
		}
		if !moved {
			l.release(c)
			c.Close()
			return
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

// peerOf is c's client address and port (the zero AddrPort when c is
// not a TCP connection).
func peerOf(c net.Conn) netip.AddrPort {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		ap := a.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// refuseConn answers a connection over its address's limit with 429 and
// closes it, without waiting: what it sent already is read first, so that
// closing does not reset the connection before the answer.
func refuseConn(c socket, addr netip.Addr, limit int, proxy bool) {
	who := "one client address"
	if proxy {
		who = "a trusted proxy, for all its clients together"
	}
	text := fmt.Sprintf("too many connections from %s: %d are open, the most %s may have; close some, then retry\n", addr, limit, who)
	answerAndClose(c, "429 Too Many Requests", text)
}

// answerAndClose answers c with status and text and closes it, without
// waiting: what it sent already is read first, so that closing does not
// reset the connection before the answer.
func answerAndClose(c socket, status, text string) {
	answer := fmt.Sprintf("HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", status, len(text), text)
	var scratch [512]byte
	for {
		if n, _, err := c.ReadNow(scratch[:]); err != nil || n < len(scratch) {
			break
		}
	}
	c.WriteNow([]byte(answer))
	c.CloseWrite()
	c.Close()
}

// countedConn is a connection counted in its address's open connections
// until it is closed, here or by net/http.
type countedConn struct {
	net.Conn
	l    *Listener
	addr netip.Addr
	elem *list.Element // in l.evictable[addr], under l.mu; nil once gone
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		l := c.l
		l.mu.Lock()
		if c.elem != nil {
			l.forget(c)
		}
		l.uncountLocked(c.addr)
		l.mu.Unlock()
	})
	return c.Conn.Close()
}

// SyscallConn gives readNow and writeNow the socket.
func (c *countedConn) SyscallConn() (syscall.RawConn, error) { return nbio.RawConn(c.Conn) }

// CloseWrite ends the connection's sending side, as a TCP connection's.
func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
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
