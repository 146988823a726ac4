package quota

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
)

// Conns counts the open connections of the clients behind trusted proxies
// (an http.Server's ConnContext and ConnState): every connection comes
// from a proxy's address, so a connection counts, against its client's
// Streams, for the client its latest request named, until it closes or
// carries a request of another client; a hijacked one (a stream) until
// the stream lets it go (the release of Count).
type Conns struct {
	clients *Streams
	trusted func(remote string) bool
	conns   sync.Map // net.Conn → *proxied
}

// proxied is a connection from a trusted proxy.
type proxied struct {
	mu     sync.Mutex
	client string // the client it counts for ("": none yet, or released)
}

type proxiedKey struct{}

// NewConns counts in clients the connections whose peer trusted (a
// RemoteAddr) says is a trusted proxy.
func NewConns(clients *Streams, trusted func(remote string) bool) *Conns {
	return &Conns{clients: clients, trusted: trusted}
}

// Context is the http.Server's ConnContext.
func (cs *Conns) Context(ctx context.Context, c net.Conn) context.Context {
	if !cs.trusted(c.RemoteAddr().String()) {
		return ctx
	}
	p := &proxied{}
	cs.conns.Store(c, p)
	return context.WithValue(ctx, proxiedKey{}, p)
}

// State is the http.Server's ConnState: a closed connection lets its
// client go; a hijacked one keeps it until its stream's release.
func (cs *Conns) State(c net.Conn, st http.ConnState) {
	if st != http.StateClosed && st != http.StateHijacked {
		return
	}
	if v, ok := cs.conns.LoadAndDelete(c); ok && st == http.StateClosed {
		v.(*proxied).release(cs.clients)
	}
}

// Handler counts each request's connection from a trusted proxy for the
// client clientOf names, refusing one over the client's most with 429 (the
// connection then closes), so that it leaves the proxy's other clients
// their own; the listener caps the proxy itself apart.
func (cs *Conns) Handler(clientOf func(*http.Request) string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client := clientOf(r)
		if _, ok := cs.Count(r.Context(), client); !ok {
			w.Header().Set("Connection", "close")
			http.Error(w, fmt.Sprintf("too many connections from %s (through a trusted proxy): %d are open, the most one client address may have; close some, then retry", client, cs.clients.max), http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Count makes the connection of ctx, when it came from a trusted proxy,
// count for client; false (nothing changed) when client holds its most
// open connections already. release ends the count, for a stream that
// holds its connection past the request (idempotent).
func (cs *Conns) Count(ctx context.Context, client string) (release func(), ok bool) {
	p, from := ctx.Value(proxiedKey{}).(*proxied)
	if !from {
		return func() {}, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client != client {
		if !cs.clients.Acquire(client) {
			return nil, false
		}
		if p.client != "" {
			cs.clients.Release(p.client)
		}
		p.client = client
	}
	return func() { p.release(cs.clients) }, true
}

// release ends the connection's count (once).
func (p *proxied) release(clients *Streams) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client != "" {
		clients.Release(p.client)
		p.client = ""
	}
}
