package load

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// NewTransport returns an http.Transport whose pool is sized to conns connections per host.
// Go's default keeps only 2 idle connections per host: with more concurrent requests than
// that, every answer beyond the second closes its connection and the next request opens a new
// one — the trap that made Node look 3x slower with maxSockets=5 in the source articles.
func NewTransport(conns int, keepAlive bool) *http.Transport {
	if conns < 1 {
		conns = 1
	}
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     90 * time.Second,
		DisableKeepAlives:   !keepAlive,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{}, // HTTP/1.1 only, as ab and wrk
	}
}

// stdClient sends requests with net/http through a shared, sized Transport.
type stdClient struct {
	client *http.Client
	req    *Request
	buf    []byte
}

// stdPool is the one client shared by all workers of a run. It counts the bytes its
// connections read, so that reports give wire bytes for both clients.
type stdPool struct {
	once   sync.Once
	client *http.Client
	wire   atomic.Int64
}

// countingConn counts the bytes read from a connection into a shared counter.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (p *stdPool) get(o *Options) *http.Client {
	p.once.Do(func() {
		tr := NewTransport(o.Connections, !o.NoKeepAlive)
		dial := tr.DialContext
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &countingConn{Conn: c, n: &p.wire}, nil
		}
		if o.Insecure {
			tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
		}
		p.client = &http.Client{Transport: tr, Timeout: o.timeout(),
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	})
	return p.client
}

func (c *stdClient) do(ctx context.Context) (int, int64, error) {
	var body io.Reader
	if len(c.req.Body) > 0 {
		body = bytes.NewReader(c.req.Body)
	}
	req, err := http.NewRequestWithContext(ctx, c.req.method(), c.req.URL, body)
	if err != nil {
		return 0, 0, fmt.Errorf("build request: %w", err)
	}
	for k, vs := range c.req.Header {
		for _, v := range vs {
			if http.CanonicalHeaderKey(k) == "Host" {
				req.Host = v
				continue
			}
			req.Header.Add(k, v)
		}
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "wasmgap-load")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Op == "dial" {
			return 0, 0, &connectError{err}
		}
		return 0, 0, err
	}
	if c.buf == nil {
		c.buf = make([]byte, 16<<10)
	}
	n, err := io.CopyBuffer(io.Discard, resp.Body, c.buf)
	resp.Body.Close()
	if err != nil {
		return resp.StatusCode, n, fmt.Errorf("read body: %w", err)
	}
	return resp.StatusCode, n, nil
}

func (c *stdClient) close() {}
