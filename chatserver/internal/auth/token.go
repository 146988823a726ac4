// Package auth is how the chat knows who speaks, chosen by the chat's options:
//
//   - open (the default, the source article's protocol): a nickname is a
//     name, anyone may log in and send as anyone;
//   - tokens (a secret): every login and send shows a connection token, a
//     JWT signed with HMAC-SHA256 whose subject is the nickname and which
//     expires (as Centrifugo's connection tokens), and may act as that
//     nickname only: log in, replay its history, read and confirm its
//     mailbox, send as it;
//   - first-come claims (Claims, without a secret): the first login of a
//     nickname gets a claim secret that every later login and send of that
//     nickname must show, until the claim expires the leave grace after the
//     nickname's last stream closed; one node keeps its claims in a Book, a
//     cluster in a JetStream key-value bucket (KVClaims).
//
// A Guard puts the mode in front of logins and sends; it refuses with an
// *Error whose Status is 401 without valid credentials and 403 with
// another's. The package knows requests and JetStream, not the chat's
// streams: chatserver asks it before a stream opens or a post goes.
package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/wasmgap/wasmgap/chatserver/internal/room"
)

// TokenCookie, the query parameter "token", an "Authorization: Bearer"
// header or (WebSocket) the subprotocol TokenProtocol+"<token>" carry a
// connection token.
const (
	TokenCookie = "chat_token"
	// TokenProtocol prefixes the token in a WebSocket subprotocol; the
	// server selects WSProtocol, which a client offers beside it.
	TokenProtocol = "token."
	WSProtocol    = "wasmgap-chat"
)

// MinSecretBytes is the shortest accepted secret: HMAC-SHA256's key
// should be as long as its output.
const MinSecretBytes = 32

// MaxTokenTTL is the longest lifetime MintToken accepts.
const MaxTokenTTL = 366 * 24 * time.Hour

// MintToken returns a connection token for nick, signed with secret (at
// least MinSecretBytes), valid for ttl (at most MaxTokenTTL): a JWT
// (header {"alg":"HS256","typ":"JWT"}) whose claims are {"sub":nick,
// "exp":...,"iat":...}. Any JWT library can mint the same from a backend.
func MintToken(secret []byte, nick string, ttl time.Duration, now time.Time) (string, error) {
	if err := CheckSecret(secret); err != nil {
		return "", err
	}
	if why := room.NickProblem(nick); why != "" {
		return "", errors.New(why)
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

// CheckSecret says why secret cannot sign tokens, or nil.
func CheckSecret(secret []byte) error {
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
	if why := room.NickProblem(c.Subject); why != "" {
		return "", fmt.Errorf("the connection token's subject is not a nickname: %s", why)
	}
	return c.Subject, nil
}

// tokenOf finds the connection token of a request: Authorization: Bearer,
// the query parameter token, a WebSocket subprotocol token.<t>, or the
// cookie chat_token, in this order.
func tokenOf(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		// The scheme is case-insensitive (RFC 7235 § 2.1).
		if scheme, t, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(t)
		}
	}
	if t := r.URL.Query().Get("token"); t != "" {
		return t
	}
	for _, p := range websocketProtocols(r) {
		if t, ok := strings.CutPrefix(p, TokenProtocol); ok {
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
