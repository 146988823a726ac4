package chatserver

import (
	"fmt"
	"net/http"
	"net/netip"
)

// countForwarded counts each request's connection from a trusted proxy
// for the client it names (quota.Conns), refusing one over the client's
// MaxOpenConnsPerAddr with 429 (the connection then closes), so that it
// leaves the proxy's other clients their own; the listener caps the proxy
// itself apart (MaxOpenConnsPerProxy).
func (s *Server) countForwarded(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.clientConns.Count(r.Context(), clientAddr(r)); !ok {
			w.Header().Set("Connection", "close")
			http.Error(w, fmt.Sprintf("too many connections from %s (through a trusted proxy): %d are open, the most one client address may have; close some, then retry", clientAddr(r), s.opts.MaxOpenConnsPerAddr), http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// streamHolds ends, with release, the count of r's connection when it came
// from a trusted proxy: a stream's connection counts for its client until
// the stream ends.
func (s *Server) streamHolds(r *http.Request, release func()) func() {
	held, _ := s.clientConns.Count(r.Context(), clientAddr(r)) // counted by countForwarded already
	return func() { release(); held() }
}

// isProxy reports whether a is a trusted proxy (the listener's cap).
func (s *Server) isProxy(a netip.Addr) bool { return s.proxies.Trusts(a.String()) }
