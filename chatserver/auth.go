package chatserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// The chat's three ways of knowing who speaks, chosen by Options:
//
//   - open (the default, the source article's protocol): a nickname is a
//     name, anyone may log in and send as anyone;
//   - tokens (Options.AuthSecret): every login and send shows a connection
//     token, a JWT signed with HMAC-SHA256 whose subject is the nickname and
//     which expires (as Centrifugo's connection tokens), and may act as that
//     nickname only: log in, replay its history, read and confirm its
//     mailbox, send as it;
//   - first-come claims (Options.ClaimNicks, without a secret): the first
//     login of a nickname gets a claim secret (claims.go) that every later
//     login and send of that nickname must show, until the claim expires
//     LeaveGrace after the nickname's last stream closed.
//
// A stream is bound to the nickname it logged in as, so its history, its
// mailbox and its confirmations are that nickname's alone; sends name their
// sender and are checked here.

// TokenCookie, the query parameter "token", an "Authorization: Bearer"
// header or (WebSocket) the subprotocol "token.<token>" carry a connection
// token.
const (
	TokenCookie = "chat_token"
	// tokenProtocol prefixes the token in a WebSocket subprotocol; the
	// server selects wsProtocol, which a client offers beside it.
	tokenProtocol = "token."
	wsProtocol    = "wasmgap-chat"
)

// MinSecretBytes is the shortest accepted AuthSecret: HMAC-SHA256's key
// should be as long as its output.
const MinSecretBytes = 32

// MaxTokenTTL is the longest lifetime MintToken accepts.
const MaxTokenTTL = 366 * 24 * time.Hour

// MintToken returns a connection token for nick, signed with secret (at
// least MinSecretBytes), valid for ttl (at most MaxTokenTTL): a JWT
// (header {"alg":"HS256","typ":"JWT"}) whose claims are {"sub":nick,
// "exp":...,"iat":...}. Any JWT library can mint the same from a backend.
func MintToken(secret []byte, nick string, ttl time.Duration, now time.Time) (string, error) {
	if err := checkSecret(secret); err != nil {
		return "", err
	}
	if err := ValidNick(nick); err != nil {
		return "", err
	}
	if ttl <= 0 || ttl > MaxTokenTTL {
		return "", fmt.Errorf("token lifetime %v: give a positive duration of at most %v, e.g. 24h", ttl, MaxTokenTTL)
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: secret}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("token signer: %w", err)
	}
	return jwt.Signed(sig).Claims(jwt.Claims{
		Subject:  nick,
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(ttl)),
	}).Serialize()
}

func checkSecret(secret []byte) error {
	if len(secret) < MinSecretBytes {
		return fmt.Errorf("the chat's token secret has %d bytes: give at least %d (e.g. head -c 48 /dev/urandom | base64 > chat.secret)", len(secret), MinSecretBytes)
	}
	return nil
}

// tokenNick verifies a connection token and returns its nickname: the
// signature (HS256 only: no "none", no public-key algorithm), an expiry
// that has not passed (no leeway) and a subject that is a valid nickname.
func tokenNick(secret []byte, raw string, now time.Time) (string, error) {
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil {
		return "", errors.New("the connection token is not a JWT signed with HS256")
	}
	var c jwt.Claims
	if err := tok.Claims(secret, &c); err != nil {
		return "", errors.New("the connection token's signature does not match this chat's secret")
	}
	if c.Expiry == nil {
		return "", errors.New("the connection token has no expiry (exp): mint one with wasmgap chat token NICK")
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Time: now}, 0); err != nil {
		if errors.Is(err, jwt.ErrExpired) {
			return "", fmt.Errorf("the connection token expired at %s: mint a new one", c.Expiry.Time().UTC().Format(time.RFC3339))
		}
		return "", errors.New("the connection token is not valid yet (nbf or iat in the future)")
	}
	if err := ValidNick(c.Subject); err != nil {
		return "", fmt.Errorf("the connection token's subject is not a nickname: %v", err)
	}
	return c.Subject, nil
}

// tokenOf finds the connection token of a request: Authorization: Bearer,
// the query parameter token, a WebSocket subprotocol token.<t>, or the
// cookie chat_token, in this order.
func tokenOf(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if t, ok := strings.CutPrefix(h, "Bearer "); ok {
			return strings.TrimSpace(t)
		}
	}
	if t := r.URL.Query().Get("token"); t != "" {
		return t
	}
	for _, p := range websocketProtocols(r) {
		if t, ok := strings.CutPrefix(p, tokenProtocol); ok {
			return t
		}
	}
	if c, err := r.Cookie(TokenCookie); err == nil {
		return c.Value
	}
	return ""
}

// websocketProtocols lists the subprotocols a WebSocket handshake offers.
func websocketProtocols(r *http.Request) []string {
	var out []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// authError refuses a login or send that did not prove its nickname:
// 401 without valid credentials, 403 with the credentials of another.
type authError struct {
	status int
	msg    string
}

func (e *authError) Error() string { return e.msg }

// authMode says how the chat knows who speaks, for logs and refusals.
func (s *Server) authMode() string {
	switch {
	case s.opts.AuthSecret != nil:
		return "tokens"
	case s.claims != nil:
		return "claims"
	}
	return "open"
}

// guardsSends reports whether a send as from must be checked (authorize)
// before it goes: always with tokens, for a claimed nickname with claims.
// The fast path of GET /msg/ (msgfast.go) hands such a send to net/http.
func (s *Server) guardsSends(from string) bool {
	switch {
	case s.opts.AuthSecret != nil:
		return true
	case s.claims != nil:
		return s.claims.mayBeClaimed(from)
	}
	return false
}

// authorizeSend checks that r may send as from; nil when it may.
func (s *Server) authorizeSend(ctx context.Context, r *http.Request, from string) error {
	switch {
	case s.opts.AuthSecret != nil:
		return s.checkToken(r, from, "send as")
	case s.claims != nil:
		return s.claims.check(ctx, from, claimShown(r, from))
	}
	return nil
}

// checkToken checks that r shows a valid token of nick.
func (s *Server) checkToken(r *http.Request, nick, what string) error {
	raw := tokenOf(r)
	if raw == "" {
		return &authError{http.StatusUnauthorized, fmt.Sprintf("this chat needs a connection token to %s %s: pass it as ?token=, an Authorization: Bearer header, the cookie %s or (WebSocket) the subprotocol token.<token>; an operator mints one with wasmgap chat token %s", what, nick, TokenCookie, nick)}
	}
	tnick, err := tokenNick(s.opts.AuthSecret, raw, time.Now())
	if err != nil {
		return &authError{http.StatusUnauthorized, err.Error()}
	}
	if tnick != nick {
		return &authError{http.StatusForbidden, fmt.Sprintf("the connection token is %s's: it may log in, read history and mail, and send as %s only, not %s as %s", tnick, tnick, what, nick)}
	}
	return nil
}

// loginGrant is what an authorized login adds to its answer and must give
// back when its stream ends.
type loginGrant struct {
	claimSecret string // a new claim's secret, for the client to keep
	release     func() // the stream ended
}

// authorizeLogin checks that r may log in as nick and, with claims, claims
// nick or shows its claim; the grant's release must be called when the
// stream ends.
func (s *Server) authorizeLogin(ctx context.Context, r *http.Request, nick string) (loginGrant, error) {
	switch {
	case s.opts.AuthSecret != nil:
		if err := s.checkToken(r, nick, "log in as"); err != nil {
			return loginGrant{}, err
		}
	case s.claims != nil:
		secret, release, err := s.claims.login(ctx, nick, claimShown(r, nick))
		if err != nil {
			return loginGrant{}, err
		}
		return loginGrant{claimSecret: secret, release: release}, nil
	}
	return loginGrant{release: func() {}}, nil
}

// claimHeaders are the response header lines that give a new claim's
// secret to its client: a cookie for browsers (sent back by their later
// logins and sends on this origin) and X-Chat-Claim for other clients.
func claimHeaders(nick, secret string) http.Header {
	h := http.Header{}
	if secret == "" {
		return h
	}
	c := &http.Cookie{Name: claimCookie(nick), Value: secret, HttpOnly: true, SameSite: http.SameSiteStrictMode}
	h.Set("Set-Cookie", c.String())
	h.Set(claimHeader, secret)
	return h
}

// authStatus is the HTTP status of a refusal by authorize*: 0 for another error.
func authStatus(err error) int {
	if ae, ok := errors.AsType[*authError](err); ok {
		return ae.status
	}
	return 0
}

// refuseAuth answers a refused login or send, as text or JSON.
func (s *Server) refuseAuth(w http.ResponseWriter, err error, asJSON bool) {
	status := authStatus(err)
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
	if o.AuthSecret != nil {
		if err := checkSecret(o.AuthSecret); err != nil {
			return err
		}
		if o.ClaimNicks {
			return errors.New("chat options: AuthSecret and ClaimNicks exclude each other: with tokens a nickname is already bound to its token's holder")
		}
	}
	if o.ClaimNicks && o.NATS.URLs != "" {
		return errors.New("chat options: ClaimNicks is for one node: over NATS, authenticate with AuthSecret (tokens hold on every node)")
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
	if s.opts.ClaimNicks && s.claims == nil {
		s.claims = newClaimBook(s.opts.LeaveGrace)
	}
	return s.proxies.Handler(next)
}
