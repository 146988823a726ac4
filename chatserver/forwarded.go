package chatserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
)

// Behind a trusted proxy, every connection comes from the proxy's address,
// so the listener caps the proxy apart (MaxOpenConnsPerProxy) and the open
// connections of its clients are counted here, by the client each request
// names (clientAddr): a connection from the proxy counts for the client of
// its latest request until it closes or carries a request of another
// client, and a stream's connection (hijacked from net/http) for its client
// until the stream ends. One client holding its MaxOpenConnsPerAddr gets
// 429 for one more, and leaves the proxy's other clients their own.

// forwardedConn is a connection from a trusted proxy to Serve.
type forwardedConn struct {
	mu     sync.Mutex
	client string // the client it counts for ("": none yet, or released)
}

type forwardedKey struct{}

// forwardedConns is what Serve's http.Server tells about the connections of
// trusted proxies (ConnContext, ConnState).
type forwardedConns struct {
	s     *Server
	conns sync.Map // net.Conn → *forwardedConn
}

// context gives a connection from a trusted proxy its forwardedConn.
func (f *forwardedConns) context(ctx context.Context, c net.Conn) context.Context {
	if !f.s.proxies.Trusts(c.RemoteAddr().String()) {
		return ctx
	}
	fc := &forwardedConn{}
	f.conns.Store(c, fc)
	return context.WithValue(ctx, forwardedKey{}, fc)
}

// state releases a closed connection's client; a hijacked one (a stream)
// is released when its stream ends (admitStream).
func (f *forwardedConns) state(c net.Conn, st http.ConnState) {
	if st != http.StateClosed && st != http.StateHijacked {
		return
	}
	if v, ok := f.conns.LoadAndDelete(c); ok && st == http.StateClosed {
		v.(*forwardedConn).release(f.s.clientConns)
	}
}

// countFor makes the connection count for client; false (and nothing
// changed) when client holds its most open connections already.
func (fc *forwardedConn) countFor(clients interface {
	Acquire(string) bool
	Release(string)
}, client string) bool {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.client == client {
		return true
	}
	if !clients.Acquire(client) {
		return false
	}
	if fc.client != "" {
		clients.Release(fc.client)
	}
	fc.client = client
	return true
}

// release ends the connection's count (once).
func (fc *forwardedConn) release(clients interface{ Release(string) }) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.client != "" {
		clients.Release(fc.client)
		fc.client = ""
	}
}

// countForwarded counts each request's connection from a trusted proxy for
// the client it names, refusing one over the client's cap with 429 (the
// connection then closes).
func (s *Server) countForwarded(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fc, ok := r.Context().Value(forwardedKey{}).(*forwardedConn); ok {
			if client := clientAddr(r); !fc.countFor(s.clientConns, client) {
				w.Header().Set("Connection", "close")
				http.Error(w, fmt.Sprintf("too many connections from %s (through a trusted proxy): %d are open, the most one client address may have; close some, then retry", client, s.clientConns.Max()), http.StatusTooManyRequests)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// streamHolds ends the count of r's connection, when it came from a trusted
// proxy, with release: a stream's connection counts for its client until
// the stream ends.
func streamHolds(r *http.Request, clients interface{ Release(string) }, release func()) func() {
	fc, ok := r.Context().Value(forwardedKey{}).(*forwardedConn)
	if !ok {
		return release
	}
	return func() { release(); fc.release(clients) }
}

// isProxy reports whether a is a trusted proxy (the listener's cap).
func (s *Server) isProxy(a netip.Addr) bool { return s.proxies.Trusts(a.String()) }
