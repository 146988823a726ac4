package chatserver

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// pageListener answers the plain requests for the page (GET or HEAD /, an
// allowed Host, nothing net/http would treat otherwise) on the connections
// it accepts, each with one prebuilt answer written in one write, sends
// the plain GET /msg/... whose post is not refused before sending
// (msgfast.go), and hands
// every other connection to net/http, with the bytes it has read: from the
// first request that is not such a one on, net/http serves the connection
// (its routes, Host check, errors, keep-alive and pipelining).
//
// A profile of GET / under `wrk -c 100` put most of the server's CPU in
// net/http's per-request work and in its two writes per answer (the 7 KB
// page overflows its 4 KB write buffer); the page is the chat's only route
// that many clients load, and the only one answered without the hub.
type pageListener struct {
	net.Listener
	hosts            *httpguard.Hosts
	sender           *Server       // sends GET /msg/... (nil: handed to net/http)
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

// pageRequestMax is the longest request head answered here: a longer one
// (a browser's, with many cookies) goes to net/http.
const pageRequestMax = 4096

var pageBuffers = sync.Pool{New: func() any { b := make([]byte, pageRequestMax); return &b }}

func newPageListener(ln net.Listener, hosts *httpguard.Hosts, sender *Server, headerTimeout, idleTimeout time.Duration) *pageListener {
	l := &pageListener{
		Listener: ln, hosts: hosts, sender: sender, headerTimeout: headerTimeout, idleTimeout: idleTimeout,
		handoff: make(chan net.Conn), errc: make(chan struct{}), done: make(chan struct{}),
		conns: map[net.Conn]struct{}{}, acceptLoopExited: make(chan struct{}),
	}
	go l.acceptLoop()
	return l
}

func (l *pageListener) acceptLoop() {
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
func (l *pageListener) answerAtOnce(c net.Conn, buf []byte) (n int, done bool) {
	n, wouldBlock, err := readNow(c, buf)
	switch {
	case wouldBlock || errors.Is(err, errors.ErrUnsupported):
		return 0, false
	case err != nil || n == 0:
		l.release(c)
		c.Close()
		return 0, true
	}
	req, verdict := parsePageRequest(buf[:n], l.hosts)
	if verdict != pageServe || !req.closeAfter || req.length != n {
		return n, false
	}
	a := &pageAnswersAt(time.Now()).answers[req.variant][req.status][req.form]
	out := a.bytes
	if req.head {
		out = out[:a.head]
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
func (l *pageListener) Accept() (net.Conn, error) {
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
func (l *pageListener) Close() error {
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

// wait waits until the connections served here have ended or been handed over.
func (l *pageListener) wait() {
	<-l.acceptLoopExited
	l.serving.Wait()
}

func (l *pageListener) isClosing() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closing
}

// release forgets c; false when the listener is closing (c must close).
func (l *pageListener) release(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.conns, c)
	return !l.closing
}

// serve answers c's page requests until it closes or sends another
// request; *bp holds the first n bytes read.
func (l *pageListener) serve(c net.Conn, bp *[]byte, n int) {
	defer l.serving.Done()
	buf := *bp
	defer pageBuffers.Put(bp)
	var answer []byte // a send's answer, built here
	var addr string   // the client's address, once a send needs it
	start, end, served := 0, n, 0
	// The deadline moves only when its kind changes or a second has passed:
	// each move is a timer update.
	var deadlineSet time.Time
	deadlineIdle := false
	for {
		req, verdict := parsePageRequest(buf[start:end], l.hosts)
		var out []byte
		switch verdict {
		case pageServe:
			a := &pageAnswersAt(time.Now()).answers[req.variant][req.status][req.form]
			out = a.bytes
			if req.head {
				out = out[:a.head]
			}
		case pageSend:
			var sent bool
			if addr == "" {
				addr = addrHost(c.RemoteAddr().String()) // the sender's (Post.Addr)
			}
			if out, sent = l.sender.sendFast(req, addr, answer[:0]); !sent {
				verdict = pageHandOff // refused before sending: net/http's answer
			}
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
		case pageServe, pageSend:
			if _, err := c.Write(out); err != nil {
				l.release(c)
				c.Close()
				return
			}
			served++
			start += req.length
			if start == end {
				start, end = 0, 0
			}
			if req.closeAfter {
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
		case pageHandOff:
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
		// pageNeedMore
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

// pageVerdict is what parsePageRequest makes of a connection's next bytes.
type pageVerdict int

const (
	pageNeedMore pageVerdict = iota // the head is not complete yet
	pageServe                       // a plain request for the page: answer it here
	pageHandOff                     // anything else: net/http's
	pageSend                        // a plain GET /msg/...: send it here, unless the post is refused (msgfast.go)
)

// pageRequest is a request for the page, as parsePageRequest read it.
type pageRequest struct {
	length     int    // bytes of the request (its head: it has no body)
	head       bool   // HEAD: the answer's head only
	variant    int    // index in pageVariants
	status     int    // 0: 200, 1: 304
	form       int    // the answer's status line and Connection header (form11KeepAlive...)
	closeAfter bool   // the connection ends after the answer
	target     []byte // GET /msg/...'s request target (pageSend), in the bytes parsed
}

// parsePageRequest reads the request at the start of b. It answers
// pageServe only for what it reads completely and the way net/http would
// (GET or HEAD of exactly "/", HTTP/1.0 or 1.1, one allowed Host, no body,
// well-formed fields), pageSend for a GET of a /msg/ target that is its own
// escaped path (isMsgTarget) with the same conditions and no
// Sec-Fetch-Site (serveMsg's cross-site check is net/http's), and
// pageHandOff for anything else, however valid: net/http then answers it,
// or refuses it with the right error.
func parsePageRequest(b []byte, hosts *httpguard.Hosts) (pageRequest, pageVerdict) {
	var req pageRequest
	lineEnd := bytes.Index(b, []byte("\r\n"))
	if lineEnd < 0 {
		if len(b) < pageRequestMax && (mayStart(b, "GET /") || mayStart(b, "HEAD /")) {
			return req, pageNeedMore
		}
		return req, pageHandOff
	}
	method, rest, _ := bytes.Cut(b[:lineEnd], []byte(" "))
	target, version, _ := bytes.Cut(rest, []byte(" "))
	if string(version) != "HTTP/1.0" && string(version) != "HTTP/1.1" {
		return req, pageHandOff
	}
	minor := version[len(version)-1]
	sends := false
	switch {
	case string(target) == "/" && (string(method) == "GET" || string(method) == "HEAD"):
		req.head = string(method) == "HEAD"
	case string(method) == "GET" && isMsgTarget(target):
		req.target, sends = target, true
	default:
		return req, pageHandOff
	}
	endOfHead := bytes.Index(b, []byte("\r\n\r\n"))
	if endOfHead < 0 {
		if len(b) >= pageRequestMax {
			return req, pageHandOff
		}
		return req, pageNeedMore
	}
	req.length = endOfHead + 4
	fields := b[bytes.IndexByte(b, '\n')+1 : endOfHead+2]
	var host []byte
	var hasHost, wantsClose, wantsKeepAlive bool
	var acceptEncoding, ifNoneMatch []string
	for len(fields) > 0 {
		i := bytes.Index(fields, []byte("\r\n"))
		line := fields[:i]
		fields = fields[i+2:]
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !isToken(line[:colon]) {
			return req, pageHandOff // folded, empty or malformed name
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		if !isFieldValue(value) {
			return req, pageHandOff
		}
		switch {
		case equalFold(name, "host"):
			if hasHost || !isHostValue(value) {
				return req, pageHandOff
			}
			host, hasHost = value, true
		case equalFold(name, "connection"):
			for tok := range bytes.SplitSeq(value, []byte(",")) {
				switch tok = bytes.Trim(tok, " \t"); {
				case equalFold(tok, "close"):
					wantsClose = true
				case equalFold(tok, "keep-alive"):
					wantsKeepAlive = true
				case len(tok) == 0:
				default:
					return req, pageHandOff // upgrade, a hop-by-hop field...
				}
			}
		case equalFold(name, "accept-encoding"):
			acceptEncoding = append(acceptEncoding, string(value))
		case equalFold(name, "if-none-match"):
			ifNoneMatch = append(ifNoneMatch, string(value))
		case equalFold(name, "content-length"):
			if string(value) != "0" {
				return req, pageHandOff
			}
		case equalFold(name, "transfer-encoding"), equalFold(name, "upgrade"), equalFold(name, "expect"):
			return req, pageHandOff
		case sends && equalFold(name, "sec-fetch-site"):
			return req, pageHandOff // a browser's send: net/http checks where it came from
		}
	}
	if wantsClose && wantsKeepAlive {
		return req, pageHandOff // net/http's answer says one and does the other
	}
	if !hasHost || !hosts.Allowed(string(host)) {
		return req, pageHandOff // net/http's 400, or the Host check's 403
	}
	if !sends {
		if acceptsGzip(acceptEncoding) {
			req.variant = 1
		}
		if len(ifNoneMatch) > 0 && etagListed(ifNoneMatch, pageVariants[req.variant].etag) {
			req.status = 1
		}
	}
	switch {
	case minor == '1' && wantsClose:
		req.form, req.closeAfter = form11Close, true
	case minor == '1':
		req.form = form11KeepAlive
	case wantsKeepAlive:
		req.form = form10KeepAlive
	default:
		req.form, req.closeAfter = form10Close, true
	}
	if sends {
		return req, pageSend
	}
	return req, pageServe
}

// mayStart reports whether b is the start of a request line beginning with
// prefix (or a shorter part of prefix).
func mayStart(b []byte, prefix string) bool {
	if len(b) <= len(prefix) {
		return string(b) == prefix[:len(b)]
	}
	return string(b[:len(prefix)]) == prefix
}

// isMsgTarget reports whether target is /msg/... written with unreserved
// characters, slashes and well-formed %-escapes only: net/http's
// EscapedPath of it is then target itself, and it has no query.
func isMsgTarget(target []byte) bool {
	rest, ok := bytes.CutPrefix(target, []byte("/msg/"))
	if !ok {
		return false
	}
	for i := 0; i < len(rest); i++ {
		switch c := rest[i]; {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '/':
		case c == '%' && i+2 < len(rest) && isHex(rest[i+1]) && isHex(rest[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isToken reports whether b is an HTTP token (a field name).
func isToken(b []byte) bool {
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0) {
			return false
		}
	}
	return true
}

// isFieldValue reports whether b holds no control character but tab.
func isFieldValue(b []byte) bool {
	for _, c := range b {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// isHostValue reports whether b can be a Host of the page: a name or an
// address, with a port.
func isHostValue(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '-' || c == '_' || c == ':' || c == '[' || c == ']') {
			return false
		}
	}
	return true
}

// equalFold compares ASCII b with lower-case s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
