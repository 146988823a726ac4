package load

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// rawClient speaks HTTP/1.1 or HTTP/1.0 directly on one net.Conn. Go's net/http client cannot
// send HTTP/1.0 requests (ab does, without -k), and per request it allocates a Request, a
// Response, header maps and goroutine hand-offs; the raw client serializes the request once and
// parses only what it needs from the answer with the parser the event-loop client uses too
// (respParser), which lets it keep up with wrk against a fast server.
//
// One rawClient belongs to one worker: it is not safe for concurrent use.
type rawClient struct {
	addr      string      // host:port to dial
	tlsConfig *tls.Config // nil for http
	req       []byte      // the whole request, serialized once
	head      bool        // HEAD request: the answer has no body
	keepAlive bool        // reuse the connection when the server allows it
	timeout   time.Duration
	dialer    net.Dialer

	conn     net.Conn
	deadline time.Time // the connection's current deadline
	buf      []byte    // what one Read returns, fed to the parser
	parser   respParser
}

// newRawClient prepares a raw client for one request description.
func newRawClient(r *Request, o *Options) (*rawClient, error) {
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil, fmt.Errorf("parse URL %q: %w", r.URL, err)
	}
	addr := u.Host
	if u.Port() == "" {
		switch u.Scheme {
		case "https":
			addr = net.JoinHostPort(u.Hostname(), "443")
		default:
			addr = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	c := &rawClient{
		addr:      addr,
		head:      r.method() == "HEAD",
		keepAlive: !o.NoKeepAlive,
		timeout:   o.timeout(),
		// No TCP keep-alive probes: they cost setsockopt calls on every new connection, and a
		// load test's connections are never idle for long.
		dialer: net.Dialer{Timeout: o.timeout(), KeepAlive: -1},
	}
	if u.Scheme == "https" {
		c.tlsConfig = &tls.Config{ServerName: u.Hostname(), InsecureSkipVerify: o.Insecure}
	}
	c.req = serializeRequest(r, u, o.HTTP10, !o.NoKeepAlive)
	c.buf = make([]byte, 16<<10)
	return c, nil
}

// serializeRequest writes the request line, headers and body once.
func serializeRequest(r *Request, u *url.URL, http10, keepAlive bool) []byte {
	var b bytes.Buffer
	path := u.RequestURI()
	proto := "HTTP/1.1"
	if http10 {
		proto = "HTTP/1.0"
	}
	fmt.Fprintf(&b, "%s %s %s\r\n", r.method(), path, proto)
	hasHost, hasUA := false, false
	for k, vs := range r.Header {
		switch strings.ToLower(k) {
		case "host":
			hasHost = true
		case "user-agent":
			hasUA = true
		case "content-length", "connection", "transfer-encoding":
			continue // the client sets these from the body and the keep-alive setting
		}
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	if !hasHost {
		fmt.Fprintf(&b, "Host: %s\r\n", u.Host)
	}
	if !hasUA {
		b.WriteString("User-Agent: wasmgap-load\r\n")
	}
	if len(r.Body) > 0 || r.method() == "POST" || r.method() == "PUT" || r.method() == "PATCH" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(r.Body))
	}
	switch {
	case http10 && keepAlive:
		b.WriteString("Connection: keep-alive\r\n") // as ab -k sends it
	case !http10 && !keepAlive:
		b.WriteString("Connection: close\r\n")
	}
	b.WriteString("\r\n")
	b.Write(r.Body)
	return b.Bytes()
}

// do sends the request once and reads the whole answer. It returns the status code and the
// number of bytes read from the wire. A kept-alive connection that the server closed while
// idle is redialed once, as browsers and net/http do, without counting an error.
func (c *rawClient) do(ctx context.Context) (status int, n int64, err error) {
	reused := c.conn != nil
	status, n, err = c.roundTrip(ctx)
	if err != nil && reused && n == 0 && isStale(err) {
		c.close()
		status, n, err = c.roundTrip(ctx)
	}
	return status, n, err
}

// isStale says whether err is what a server-closed idle connection gives on the next use.
func isStale(err error) bool {
	var ce *connectError
	if errors.As(err, &ce) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true
}

// connectError wraps a failure to open the connection, so that reports count it apart.
// Its message is the cause alone, said once ("connection refused"): the kind (ErrConnect)
// already says that connecting failed.
type connectError struct{ err error }

func (e *connectError) Error() string {
	var errno syscall.Errno
	if errors.As(e.err, &errno) {
		return errno.Error()
	}
	return e.err.Error()
}
func (e *connectError) Unwrap() error { return e.err }

func (c *rawClient) dial(ctx context.Context) error {
	conn, err := c.dialer.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return &connectError{err}
	}
	if c.tlsConfig != nil {
		tc := tls.Client(conn, c.tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return &connectError{fmt.Errorf("TLS handshake: %w", err)}
		}
		conn = tc
	}
	c.conn = conn
	c.deadline = time.Time{}
	return nil
}

func (c *rawClient) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

func (c *rawClient) roundTrip(ctx context.Context) (int, int64, error) {
	if c.conn == nil {
		if err := c.dial(ctx); err != nil {
			return 0, 0, err
		}
	}
	// Moving the deadline costs a runtime timer update; refresh it only when less than 90% of
	// the timeout is left, so each request still gets at least 90% of it.
	if now := time.Now(); c.deadline.Sub(now) < c.timeout*9/10 {
		c.deadline = now.Add(c.timeout)
		c.conn.SetDeadline(c.deadline)
	}
	if _, err := c.conn.Write(c.req); err != nil {
		c.close()
		return 0, 0, fmt.Errorf("write request: %w", err)
	}
	status, n, keep, err := c.readResponse()
	if err != nil {
		c.close()
		return status, n, err
	}
	if !keep || !c.keepAlive {
		c.close()
	}
	return status, n, nil
}

// readResponse reads one answer through the parser and says how many of the bytes read
// belong to it and whether the connection may carry another request.
func (c *rawClient) readResponse() (status int, n int64, keep bool, err error) {
	p := &c.parser
	p.reset()
	p.head = c.head
	for {
		m, rerr := c.conn.Read(c.buf)
		if m > 0 {
			used, done, perr := p.feed(c.buf[:m])
			n += int64(used)
			if perr != nil {
				return p.status, n, false, perr
			}
			if done {
				return p.status, n, p.keep, nil
			}
		}
		switch {
		case rerr == io.EOF:
			if p.eof() {
				return p.status, n, false, nil
			}
			return p.status, n, false, fmt.Errorf("read answer: %w", errUnexpectedClose)
		case rerr != nil:
			return p.status, n, false, fmt.Errorf("read answer: %w", rerr)
		}
	}
}
