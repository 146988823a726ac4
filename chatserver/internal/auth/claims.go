package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// First-come nickname claims (Options.ClaimNicks): in an open chat, the
// first login of a nickname gets a random secret; while the claim lasts,
// a login or a send as that nickname must show it (403 otherwise). A claim
// protects the nickname's past as well as its present: it lasts while the
// nickname has a stream open and, after its last one closed, for the hold
// its owner gives (the chat's: its retention and leave grace, as long as
// the nickname's history is kept), renewed by every message that waits in
// its mailbox (Keep), so its history and mail go to no one else; then the
// next login takes the nickname afresh. Only the secret's SHA-256 is kept.

const (
	// ClaimHeader carries a claim's secret, in the answer to the login
	// that made it and in the requests that show it.
	ClaimHeader = "X-Chat-Claim"
	// claimCookiePrefix + nick is the cookie that carries it in browsers.
	claimCookiePrefix = "chat_claim_"
)

// ClaimCookie is the name of the cookie that carries nick's claim in browsers.
func ClaimCookie(nick string) string { return claimCookiePrefix + nick }

// claimShown is the claim secret r shows for nick: the X-Chat-Claim header,
// the query parameter claim, or the cookie chat_claim_<nick>.
func claimShown(r *http.Request, nick string) string {
	if v := r.Header.Get(ClaimHeader); v != "" {
		return v
	}
	if v := r.URL.Query().Get("claim"); v != "" {
		return v
	}
	if c, err := r.Cookie(ClaimCookie(nick)); err == nil {
		return c.Value
	}
	return ""
}

// Claims keeps the claims: a Book on one node, KVClaims in a cluster.
type Claims interface {
	// Login claims nick, or checks the claim shown when nick is claimed;
	// secret is a new claim's ("" when the claim was shown), release ends
	// the stream's hold on it.
	Login(ctx context.Context, nick, shown string) (secret string, release func(), err error)
	// Check refuses a send as nick when nick is claimed and shown is not its secret.
	Check(ctx context.Context, nick, shown string) error
	// MayBeClaimed is false when nick is certainly not claimed (a send as
	// it can take the fast path).
	MayBeClaimed(nick string) bool
	// Keep holds nick's claim, when there is one, for the hold from now: a
	// message waits in its mailbox for as long.
	Keep(ctx context.Context, nick string) error
}

func newClaimSecret() string {
	var b [24]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func hashSecret(s string) [32]byte { return sha256.Sum256([]byte(s)) }

func secretMatches(hash [32]byte, shown string) bool {
	h := hashSecret(shown)
	return shown != "" && subtle.ConstantTimeCompare(h[:], hash[:]) == 1
}

func claimedError(nick string, hold time.Duration) error {
	return &Error{http.StatusForbidden, fmt.Sprintf("nickname %s is claimed by its first login, which got a secret: show it (the cookie %s, the header %s or ?claim=) or pick another nickname; the claim protects %s's history and mail, and ends %v after %s's last stream closed and its last offline message arrived",
		nick, ClaimCookie(nick), ClaimHeader, nick, max(hold, 0), nick)}
}

// Book is the claims of one node.
type Book struct {
	grace time.Duration
	mu    sync.Mutex
	m     map[string]*claim
	swept int // len(m) after the last sweep
}

type claim struct {
	hash    [32]byte
	streams int       // open streams of the nickname on this node
	until   time.Time // with no stream: when the claim ends
}

// NewBook returns an empty book whose claims last grace (the hold) after
// their nickname's last stream closed, or its last Keep.
func NewBook(grace time.Duration) *Book {
	return &Book{grace: grace, m: map[string]*claim{}}
}

var (
	_ Claims = (*Book)(nil)
	_ Claims = (*KVClaims)(nil)
)

// live reports whether c still holds its nickname at now.
func (c *claim) live(now time.Time) bool { return c.streams > 0 || now.Before(c.until) }

func (b *Book) Login(_ context.Context, nick, shown string) (string, func(), error) {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.m[nick]
	secret := ""
	switch {
	case c != nil && c.live(now):
		if !secretMatches(c.hash, shown) {
			return "", nil, claimedError(nick, b.grace)
		}
	default:
		b.sweep(now)
		secret = newClaimSecret()
		c = &claim{hash: hashSecret(secret)}
		b.m[nick] = c
	}
	c.streams++
	var once sync.Once
	return secret, func() { once.Do(func() { b.release(nick, c) }) }, nil
}

func (b *Book) release(nick string, c *claim) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c.streams--
	if c.streams == 0 {
		c.until = later(c.until, time.Now().Add(max(b.grace, 0)))
		if b.grace <= 0 && b.m[nick] == c {
			delete(b.m, nick)
		}
	}
}

// sweep forgets the ended claims once the book doubled since the last
// sweep: the book holds the nicknames online or in their grace, and the
// ended ones for at most as many again.
func (b *Book) sweep(now time.Time) {
	if len(b.m) < 2*b.swept+1024 {
		return
	}
	for n, c := range b.m {
		if !c.live(now) {
			delete(b.m, n)
		}
	}
	b.swept = len(b.m)
}

func (b *Book) Check(_ context.Context, nick, shown string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.m[nick]; c != nil && c.live(time.Now()) && !secretMatches(c.hash, shown) {
		return claimedError(nick, b.grace)
	}
	return nil
}

func (b *Book) Keep(_ context.Context, nick string) error {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.m[nick]; c != nil && c.live(now) {
		c.until = later(c.until, now.Add(max(b.grace, 0)))
	}
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (b *Book) MayBeClaimed(nick string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.m[nick]
	return c != nil && c.live(time.Now())
}
