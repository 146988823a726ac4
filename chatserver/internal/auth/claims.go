package auth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/store"
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

// Book is the claims of one node, kept in memory and, from RestoreBook, in
// the node's store: every change of a claim is saved, and a new claim's
// secret is given only once the claim is on disk, so that a restart, clean
// or not, keeps every claim for its hold.
type Book struct {
	grace time.Duration
	save  SaveFunc
	mu    sync.Mutex
	m     map[string]*claim
	swept int // len(m) after the last sweep
}

// SaveFunc stores nick's claim as the book holds it when it runs (Book.Store);
// with wait, it returns once that is on disk. The book calls it after each
// change, outside its lock, so the last save of a nickname always finds its
// latest claim.
type SaveFunc func(ctx context.Context, nick string, wait bool) error

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

// RestoreBook is the book of the claims a node's store kept, at the node's
// start (now), with save to save each change (Persist); ended lists the
// kept claims that ended meanwhile, for the store to delete. A claim whose
// stream was open (at a crash) holds its nickname for the hold from now,
// as if that stream had just closed.
func RestoreBook(grace time.Duration, kept map[string]store.Claim, now time.Time, save SaveFunc) (b *Book, ended []string) {
	b = NewBook(grace)
	b.save = save
	for nick, k := range kept {
		c := &claim{hash: [32]byte(k.Hash), until: time.Unix(0, k.Until)}
		if k.Open {
			c.until = later(c.until, now.Add(max(grace, 0)))
		}
		if c.live(now) {
			b.m[nick] = c
		} else {
			ended = append(ended, nick)
		}
	}
	return b, ended
}

// Store writes nick's claim as the book holds it now into tx (deletes it
// when there is none): what a SaveFunc does on the store's writer.
func (b *Book) Store(tx *store.Tx, nick string) error {
	b.mu.Lock()
	c := b.m[nick]
	var k store.Claim
	if c != nil {
		k = store.Claim{Hash: bytes.Clone(c.hash[:]), Open: c.streams > 0}
		if !c.until.IsZero() {
			k.Until = c.until.UnixNano()
		}
	}
	b.mu.Unlock()
	if c == nil {
		return store.DeleteClaim(tx, nick)
	}
	return store.PutClaim(tx, nick, &k)
}

// saved saves the claims of nicks without waiting (a failure is the
// SaveFunc's to tell: a later change saves them again).
func (b *Book) saved(nicks ...string) {
	if b.save == nil {
		return
	}
	for _, n := range nicks {
		b.save(context.Background(), n, false)
	}
}

var (
	_ Claims = (*Book)(nil)
	_ Claims = (*KVClaims)(nil)
)

// live reports whether c still holds its nickname at now.
func (c *claim) live(now time.Time) bool { return c.streams > 0 || now.Before(c.until) }

func (b *Book) Login(ctx context.Context, nick, shown string) (string, func(), error) {
	now := time.Now()
	b.mu.Lock()
	c := b.m[nick]
	secret := ""
	var swept []string
	switch {
	case c != nil && c.live(now):
		if !secretMatches(c.hash, shown) {
			b.mu.Unlock()
			return "", nil, claimedError(nick, b.grace)
		}
	default:
		swept = b.sweep(now)
		secret = newClaimSecret()
		c = &claim{hash: hashSecret(secret)}
		b.m[nick] = c
	}
	c.streams++
	first := c.streams == 1
	b.mu.Unlock()
	b.saved(swept...)
	release := func() { b.release(nick, c) }
	switch {
	case secret != "" && b.save != nil:
		// The secret goes out only once the claim is on disk: a claim
		// lost in a crash would give the nickname to the next login.
		if err := b.save(ctx, nick, true); err != nil {
			b.abandon(nick, c)
			return "", nil, fmt.Errorf("claim the nickname %s: %w", nick, err)
		}
	case first:
		b.saved(nick)
	}
	var once sync.Once
	return secret, func() { once.Do(release) }, nil
}

// abandon takes back the new claim c of nick, which could not be saved:
// nobody has its secret.
func (b *Book) abandon(nick string, c *claim) {
	b.mu.Lock()
	c.streams--
	if c.streams == 0 && b.m[nick] == c {
		delete(b.m, nick)
	}
	b.mu.Unlock()
	b.saved(nick)
}

func (b *Book) release(nick string, c *claim) {
	b.mu.Lock()
	c.streams--
	last := c.streams == 0
	if last {
		c.until = later(c.until, time.Now().Add(max(b.grace, 0)))
		if b.grace <= 0 && b.m[nick] == c {
			delete(b.m, nick)
		}
	}
	b.mu.Unlock()
	if last {
		b.saved(nick)
	}
}

// sweep forgets the ended claims once the book doubled since the last
// sweep: the book holds the nicknames online or in their grace, and the
// ended ones for at most as many again. It returns the nicknames it
// forgot, for the store to forget them too.
func (b *Book) sweep(now time.Time) []string {
	if len(b.m) < 2*b.swept+1024 {
		return nil
	}
	var gone []string
	for n, c := range b.m {
		if !c.live(now) {
			delete(b.m, n)
			gone = append(gone, n)
		}
	}
	b.swept = len(b.m)
	return gone
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
	c := b.m[nick]
	kept := c != nil && c.live(now)
	if kept {
		c.until = later(c.until, now.Add(max(b.grace, 0)))
	}
	b.mu.Unlock()
	if kept {
		b.saved(nick)
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
