package chatserver

import (
	"net/http"
	"net/netip"
)

// streamHolds ends, with release, the count of r's connection when it came
// from a trusted proxy: a stream's connection counts for its client until
// the stream ends.
func (s *Server) streamHolds(r *http.Request, release func()) func() {
	held, _ := s.clientConns.Count(r.Context(), s.clientAddr(r)) // counted by clientConns.Handler already
	return func() { release(); held() }
}

// isProxy reports whether a is a trusted proxy (the listener's cap).
func (s *Server) isProxy(a netip.Addr) bool { return s.proxies.Trusts(a.String()) }
