package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Error refuses a login or send that did not prove its nickname: Status
// is 401 without valid credentials, 403 with the credentials of another.
type Error struct {
	Status int
	msg    string
}

func (e *Error) Error() string { return e.msg }

// Status is the HTTP status of a refusal by a Guard: 0 for another error
// (NATS could not be asked, say).
func Status(err error) int {
	if ae, ok := errors.AsType[*Error](err); ok {
		return ae.Status
	}
	return 0
}

// Guard checks logins and sends: with Secret (tokens), with Claims
// (first-come claims), or neither (open). Both set is refused by CheckMode.
type Guard struct {
	Secret []byte
	Claims Claims
}

// CheckMode says why a secret and nickname claims cannot go together, or
// why the secret is too short; nil when they can.
func CheckMode(secret []byte, claims bool) error {
	if secret == nil {
		return nil
	}
	if err := CheckSecret(secret); err != nil {
		return err
	}
	if claims {
		return errors.New("chat options: AuthSecret and ClaimNicks exclude each other: with tokens a nickname is already bound to its token's holder")
	}
	return nil
}

// KeepClaim holds nick's claim, when claims are kept and nick has one, for
// their hold from now: a message to nick waits in its mailbox.
func (g *Guard) KeepClaim(ctx context.Context, nick string) error {
	if g.Claims == nil {
		return nil
	}
	return g.Claims.Keep(ctx, nick)
}

// Mode says how the chat knows who speaks, for logs and refusals: tokens,
// claims or open.
func (g *Guard) Mode() string {
	switch {
	case g.Secret != nil:
		return "tokens"
	case g.Claims != nil:
		return "claims"
	}
	return "open"
}

// GuardsSends reports whether a send as from must be checked
// (AuthorizeSend) before it goes: always with tokens, for a claimed
// nickname with claims. A fast path hands such a send to net/http.
func (g *Guard) GuardsSends(from string) bool {
	switch {
	case g.Secret != nil:
		return true
	case g.Claims != nil:
		return g.Claims.MayBeClaimed(from)
	}
	return false
}

// AuthorizeSend checks that r may send as from; nil when it may.
func (g *Guard) AuthorizeSend(ctx context.Context, r *http.Request, from string) error {
	switch {
	case g.Secret != nil:
		return g.checkToken(r, from, "send as")
	case g.Claims != nil:
		return g.Claims.Check(ctx, from, claimShown(r, from))
	}
	return nil
}

// checkToken checks that r shows a valid token of nick.
func (g *Guard) checkToken(r *http.Request, nick, what string) error {
	raw := tokenOf(r)
	if raw == "" {
		return &Error{http.StatusUnauthorized, fmt.Sprintf("this chat needs a connection token to %s %s: pass it as ?token=, an Authorization: Bearer header, the cookie %s or (WebSocket) the subprotocol token.<token>; an operator mints one with wasmgap chat token %s", what, nick, TokenCookie, nick)}
	}
	tnick, err := tokenNick(g.Secret, raw, time.Now())
	if err != nil {
		return &Error{http.StatusUnauthorized, err.Error()}
	}
	if tnick != nick {
		return &Error{http.StatusForbidden, fmt.Sprintf("the connection token is %s's: it may log in, read history and mail, and send as %s only, not %s %s", tnick, tnick, what, nick)}
	}
	return nil
}

// Grant is what an authorized login adds to its answer and must give back
// when its stream ends.
type Grant struct {
	claimSecret string // a new claim's secret, for the client to keep
	Release     func() // the stream ended
}

// AuthorizeLogin checks that r may log in as nick and, with claims, claims
// nick or shows its claim; the grant's Release must be called when the
// stream ends.
func (g *Guard) AuthorizeLogin(ctx context.Context, r *http.Request, nick string) (Grant, error) {
	switch {
	case g.Secret != nil:
		if err := g.checkToken(r, nick, "log in as"); err != nil {
			return Grant{}, err
		}
	case g.Claims != nil:
		secret, release, err := g.Claims.Login(ctx, nick, claimShown(r, nick))
		if err != nil {
			return Grant{}, err
		}
		return Grant{claimSecret: secret, Release: release}, nil
	}
	return Grant{Release: func() {}}, nil
}

// Header is the answer's header lines that give a new claim's secret to
// its client (none when the login showed its claim): a cookie for
// browsers (sent back by their later logins and sends on this origin) and
// X-Chat-Claim for other clients.
func (g Grant) Header(nick string) http.Header {
	h := http.Header{}
	if g.claimSecret == "" {
		return h
	}
	c := &http.Cookie{Name: ClaimCookie(nick), Value: g.claimSecret, HttpOnly: true, SameSite: http.SameSiteStrictMode}
	h.Set("Set-Cookie", c.String())
	h.Set(ClaimHeader, g.claimSecret)
	return h
}
