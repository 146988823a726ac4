package load

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// rawClient speaks HTTP/1.1 or HTTP/1.0 directly on one net.Conn. Go's net/http client cannot
// send HTTP/1.0 requests (ab does, without -k), and per request it allocates a Request, a
// Response, header maps and goroutine hand-offs; the raw client serializes the request once and
// parses only what it needs from the answer (status, Content-Length, Transfer-Encoding,
// Connection), which lets it keep up with wrk against a fast server.
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
	cr       countingReader
	br       *bufio.Reader
	line     []byte // scratch for header lines that do not fit the bufio buffer
}

// countingReader counts the bytes read from the connection: the wire bytes of each answer.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
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
	c.cr.r = nil
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

// errProtocol marks an answer that is not valid HTTP/1.x.
var errProtocol = errors.New("malformed HTTP response")

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
type connectError struct{ err error }

func (e *connectError) Error() string { return "connect: " + e.err.Error() }
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
	c.cr.r = conn
	if c.br == nil {
		c.br = bufio.NewReaderSize(&c.cr, 16<<10)
	} else {
		c.br.Reset(&c.cr)
	}
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
	c.cr.n = 0
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
	status, keep, err := c.readResponse()
	n := c.cr.n - int64(c.br.Buffered())
	if err != nil {
		c.close()
		return status, n, err
	}
	if !keep || !c.keepAlive {
		c.close()
	}
	return status, n, nil
}

// readResponse reads the status line, the headers and the body of one answer and says
// whether the connection may carry another request.
func (c *rawClient) readResponse() (status int, keep bool, err error) {
	line, err := c.readLine()
	if err != nil {
		return 0, false, fmt.Errorf("read status line: %w", err)
	}
	// "HTTP/1.1 200 OK"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, false, fmt.Errorf("%w: status line %q", errProtocol, truncate(line))
	}
	http11 := line[7] == '1'
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil || status < 100 {
		return 0, false, fmt.Errorf("%w: status line %q", errProtocol, truncate(line))
	}
	keep = http11
	contentLength := int64(-1)
	chunked := false
	for {
		line, err = c.readLine()
		if err != nil {
			return status, false, fmt.Errorf("read headers: %w", err)
		}
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return status, false, fmt.Errorf("%w: header line %q", errProtocol, truncate(line))
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case asciiEqualFold(name, "content-length"):
			v, perr := strconv.ParseInt(string(value), 10, 64)
			if perr != nil || v < 0 {
				return status, false, fmt.Errorf("%w: Content-Length %q", errProtocol, truncate(value))
			}
			contentLength = v
		case asciiEqualFold(name, "transfer-encoding"):
			chunked = containsFold(value, "chunked")
		case asciiEqualFold(name, "connection"):
			if containsFold(value, "close") {
				keep = false
			} else if containsFold(value, "keep-alive") {
				keep = true
			}
		}
	}
	if status >= 100 && status < 200 {
		// An interim answer (100 Continue): the real one follows.
		return c.readResponse()
	}
	switch {
	case c.head || status == 204 || status == 304:
	case chunked:
		err = c.discardChunked()
	case contentLength >= 0:
		_, err = c.br.Discard(int(contentLength))
	default:
		// No length: the body runs to the end of the connection.
		_, err = io.Copy(io.Discard, c.br)
		keep = false
	}
	if err != nil {
		return status, false, fmt.Errorf("read body: %w", err)
	}
	return status, keep, nil
}

func (c *rawClient) discardChunked() error {
	for {
		line, err := c.readLine()
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("%w: chunk size %q", errProtocol, truncate(line))
		}
		if size == 0 {
			// Trailers, then the empty line.
			for {
				line, err = c.readLine()
				if err != nil {
					return err
				}
				if len(line) == 0 {
					return nil
				}
			}
		}
		if _, err := c.br.Discard(int(size)); err != nil {
			return err
		}
		line, err = c.readLine()
		if err != nil {
			return err
		}
		if len(line) != 0 {
			return fmt.Errorf("%w: no CRLF after chunk", errProtocol)
		}
	}
}

// readLine returns one line without its CRLF. The slice is valid until the next read.
func (c *rawClient) readLine() ([]byte, error) {
	line, isPrefix, err := c.br.ReadLine()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if !isPrefix {
		return line, nil
	}
	c.line = append(c.line[:0], line...)
	for isPrefix {
		line, isPrefix, err = c.br.ReadLine()
		if err != nil {
			return nil, err
		}
		c.line = append(c.line, line...)
		if len(c.line) > 1<<20 {
			return nil, fmt.Errorf("%w: header line longer than 1 MiB", errProtocol)
		}
	}
	return c.line, nil
}

func asciiEqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// containsFold says whether b contains the lower-case ASCII word, ignoring case.
func containsFold(b []byte, lower string) bool {
	for i := 0; i+len(lower) <= len(b); i++ {
		if asciiEqualFold(b[i:i+len(lower)], lower) {
			return true
		}
	}
	return false
}

func truncate(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}
