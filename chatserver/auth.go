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

// checkAuth checks the options of authentication and of proxies.
func checkAuth(o *Options) error {
	if err := auth.CheckMode(o.AuthSecret, o.ClaimNicks); err != nil {
		return err
	}
	if _, err := httpguard.NewProxies(o.TrustedProxies, o.ProxyHeader); err != nil {
		return fmt.Errorf("chat options: %w", err)
	}
	return nil
}

// guard is the handler's outermost layer: the client's address through
// trusted proxies, and the claims of an open chat that claims nicknames.
func (s *Server) guard(next http.Handler) http.Handler {
	s.proxies, _ = httpguard.NewProxies(s.opts.TrustedProxies, s.opts.ProxyHeader) // checked by New
	s.auth.Secret = s.opts.AuthSecret
	if s.opts.ClaimNicks && s.auth.Claims == nil {
		s.auth.Claims = s.node.claims()
	}
	return s.proxies.Handler(s.clientConns.Handler(clientAddr, next))
}
