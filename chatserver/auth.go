package chatserver

import (
	"fmt"
	"net/http"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/auth"
	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// Who speaks is internal/auth's: open by default, tokens with
// Options.AuthSecret, first-come claims with Options.ClaimNicks. A stream
// is bound to the nickname it logged in as, so its history, its mailbox
// and its confirmations are that nickname's alone; sends name their sender
// and are checked by the guard before they go.

// MinSecretBytes is the shortest accepted AuthSecret.
const MinSecretBytes = auth.MinSecretBytes

// MintToken returns a connection token for nick, signed with secret (at
// least MinSecretBytes), valid for ttl (at most a year and a day): a JWT
// (HS256) whose claims are {"sub":nick,"exp":...,"iat":...}. Any JWT
// library can mint the same from a backend.
func MintToken(secret []byte, nick string, ttl time.Duration, now time.Time) (string, error) {
	return auth.MintToken(secret, nick, ttl, now)
}

// refuseAuth answers a refused login or send, as text or JSON.
func (s *Server) refuseAuth(w http.ResponseWriter, err error, asJSON bool) {
	status := auth.Status(err)
	if status == 0 {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="chat"`)
	}
	s.sendError(w, status, err, asJSON)
}

// checkAuth checks the options of authentication and of proxies, and
// returns the proxies (TrustedProxies, ProxyHeader, IPv6Prefix).
func checkAuth(o *Options) (*httpguard.Proxies, error) {
	if err := auth.CheckMode(o.AuthSecret, o.ClaimNicks); err != nil {
		return nil, err
	}
	p, err := httpguard.NewProxies(o.TrustedProxies, o.ProxyHeader)
	if err == nil {
		p, err = p.WithIPv6Prefix(o.IPv6Prefix)
	}
	if err != nil {
		return nil, fmt.Errorf("chat options: %w", err)
	}
	return p, nil
}

// clientAddr is the key of the request's client for every per-address
// limit: its address (a trusted proxy's client: the proxies' handler has
// set RemoteAddr), an IPv6 one by its prefix (httpguard.Proxies.Key).
func (s *Server) clientAddr(r *http.Request) string {
	return s.proxies.Key(httpguard.PeerAddr(r.RemoteAddr))
}

// guard is the handler's outermost layer: the client's address through
// trusted proxies, and the claims of an open chat that claims nicknames.
func (s *Server) guard(next http.Handler) http.Handler {
	s.auth.Secret = s.opts.AuthSecret
	if s.opts.ClaimNicks && s.auth.Claims == nil {
		s.auth.Claims = s.node.claims()
	}
	return s.proxies.Handler(s.clientConns.Handler(s.clientAddr, next))
}
