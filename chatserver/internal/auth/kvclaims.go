package auth

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The nick claims of a chat over NATS (claims with NATS) live
// in the JetStream key-value bucket chat-claims, one key per claimed nick,
// so that every node sees them. A claim names, for each node that holds
// streams of the nick, until when it holds it: a node renews its hold every
// claimRenew while it has streams of the nick (claimLease ahead), and sets
// it to now + LeaveGrace when its last one closes. The claim lasts while a
// hold has not passed, so a node that crashes lets go of its nicks within
// claimLease. Every change is a compare-and-set on the key's revision.

const (
	claimBucket = "chat-claims"
	claimRenew  = 5 * time.Second
	claimLease  = 3 * claimRenew
	// claimBucketAge removes the keys of claims unused for that long: a
	// live claim is rewritten every claimRenew.
	claimBucketAge = time.Hour
	claimTries     = 16
	// settleRetry is the pause between tries while NATS settles.
	settleRetry = 100 * time.Millisecond
)

// storedClaim is a claim's value in the bucket.
type storedClaim struct {
	Hash  string           `json:"h"` // base64 of the SHA-256 of its secret
	Holds map[string]int64 `json:"n"` // node incarnation → hold until (Unix ns)
}

func (c *storedClaim) live(now time.Time) bool {
	for _, until := range c.Holds {
		if until > now.UnixNano() {
			return true
		}
	}
	return false
}

func (c *storedClaim) matches(shown string) bool {
	h, err := base64.StdEncoding.DecodeString(c.Hash)
	return err == nil && len(h) == 32 && secretMatches([32]byte(h), shown)
}

// KVConfig is what KVClaims needs of its node.
type KVConfig struct {
	JS     jetstream.JetStream
	Stream string        // the chat's stream: the bucket takes its replicas
	Node   func() string // this node's incarnation
	Quit   <-chan struct{}
	Logger *slog.Logger
	Grace  time.Duration // the hold: how long a claim outlasts its last stream, and its last Keep
	Wait   time.Duration // the longest wait for NATS in a release or renewal
	// Unavailable is the kind of error (errors.Is) a claim that NATS could
	// not check or change is refused with.
	Unavailable error
}

// KVClaims is the Claims of a node of a chat over NATS.
type KVClaims struct {
	cfg KVConfig

	mu     sync.Mutex
	kv     jetstream.KeyValue // made at first use
	local  map[string]int     // nick → this node's streams holding its claim
	renews bool               // the renewing goroutine runs
}

// NewKVClaims returns the claims of a node, kept in the bucket chat-claims.
func NewKVClaims(cfg KVConfig) *KVClaims {
	return &KVClaims{cfg: cfg, local: map[string]int{}}
}

// claimKey is nick's key: hex, as a nick may hold dots a key cannot place
// (a leading one, two in a row).
func claimKey(nick string) string { return "n" + hex.EncodeToString([]byte(nick)) }

// bucket returns the claims' bucket, making it, when no node has, with the
// replicas of the chat's stream.
func (c *KVClaims) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kv != nil {
		return c.kv, nil
	}
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	replicas := 1
	kv, err := settle(ctx, func() (jetstream.KeyValue, error) {
		// Another node made it first, most often: a lookup is one request,
		// where an update of a replicated bucket waits for its replicas.
		if kv, err := c.cfg.JS.KeyValue(ctx, claimBucket); !errors.Is(err, jetstream.ErrBucketNotFound) {
			return kv, err
		}
		if st, err := c.cfg.JS.Stream(ctx, c.cfg.Stream); err == nil {
			replicas = st.CachedInfo().Config.Replicas
		}
		return c.cfg.JS.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:      claimBucket,
			Description: "wasmgap chat: nick claims (--claim-nicks), with the nodes that hold each",
			TTL:         max(claimBucketAge, c.cfg.Grace+claimLease),
			Replicas:    replicas,
			Storage:     jetstream.FileStorage,
		})
	})
	if err != nil {
		return nil, fmt.Errorf("%w: nick claims: key-value bucket %s (%d replicas): %v", c.cfg.Unavailable, claimBucket, replicas, err)
	}
	c.kv = kv
	return kv, nil
}

// bounded bounds ctx by Wait, the longest wait for NATS.
func (c *KVClaims) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.cfg.Wait > 0 {
		return context.WithTimeout(ctx, c.cfg.Wait)
	}
	return context.WithCancel(ctx)
}

// settle runs op again, every settleRetry, while it fails as a cluster
// that is starting or electing a leader answers (settling) and ctx lasts:
// a claim waits for NATS to settle instead of failing at once.
func settle[T any](ctx context.Context, op func() (T, error)) (T, error) {
	for {
		v, err := op()
		if err == nil || !settling(err) {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(settleRetry):
		}
	}
}

// settling reports whether err is one of a NATS cluster that is still
// settling: no server answers the request yet, the bucket's replicas
// cannot be placed yet ("no suitable peers"), JetStream is briefly
// unavailable.
func settling(err error) bool {
	if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrTimeout) {
		return true
	}
	apiErr, ok := errors.AsType[*jetstream.APIError](err)
	return ok && (apiErr.ErrorCode == jsClusterNoPeers || apiErr.ErrorCode == jsClusterNotAvailable || apiErr.Code == 503)
}

// JetStream's error codes of a cluster still settling (nats-server's
// JSClusterNoPeersErr and JSClusterNotAvailErr).
const (
	jsClusterNoPeers      jetstream.ErrorCode = 10005
	jsClusterNotAvailable jetstream.ErrorCode = 10008
)

// update applies change to nick's claim (nil when there is none) and
// stores what it returns, retrying when another node changed it first.
func (c *KVClaims) update(ctx context.Context, nick string, change func(cur *storedClaim) (*storedClaim, error)) error {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	kv, err := c.bucket(ctx)
	if err != nil {
		return err
	}
	key := claimKey(nick)
	for range claimTries {
		var cur *storedClaim
		var rev uint64
		e, err := settle(ctx, func() (jetstream.KeyValueEntry, error) { return kv.Get(ctx, key) })
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return fmt.Errorf("%w: nick claims: %v", c.cfg.Unavailable, err)
		default:
			rev = e.Revision()
			cur = &storedClaim{}
			if json.Unmarshal(e.Value(), cur) != nil {
				cur = nil // not a claim: taken afresh
			}
		}
		next, err := change(cur)
		if err != nil || next == nil {
			return err
		}
		b, _ := json.Marshal(next)
		_, err = settle(ctx, func() (uint64, error) {
			if rev == 0 {
				return kv.Create(ctx, key, b)
			}
			return kv.Update(ctx, key, b, rev)
		})
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !isWrongRevision(err) {
			return fmt.Errorf("%w: nick claims: %v", c.cfg.Unavailable, err)
		}
	}
	return fmt.Errorf("%w: nick claims: %s's claim changed %d times in a row", c.cfg.Unavailable, nick, claimTries)
}

func isWrongRevision(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence
}

func (c *KVClaims) Login(ctx context.Context, nick, shown string) (string, func(), error) {
	node := c.cfg.Node()
	secret := ""
	err := c.update(ctx, nick, func(cur *storedClaim) (*storedClaim, error) {
		now := time.Now()
		secret = ""
		if cur != nil && cur.live(now) {
			if !cur.matches(shown) {
				return nil, claimedError(nick, c.cfg.Grace)
			}
			next := &storedClaim{Hash: cur.Hash, Holds: maps.Clone(cur.Holds)}
			next.Holds[node] = now.Add(claimLease).UnixNano()
			return next, nil
		}
		secret = newClaimSecret()
		h := hashSecret(secret)
		return &storedClaim{Hash: base64.StdEncoding.EncodeToString(h[:]), Holds: map[string]int64{node: now.Add(claimLease).UnixNano()}}, nil
	})
	if err != nil {
		return "", nil, err
	}
	c.mu.Lock()
	c.local[nick]++
	if !c.renews {
		c.renews = true
		go c.renew()
	}
	c.mu.Unlock()
	var once sync.Once
	return secret, func() { once.Do(func() { c.release(nick, node) }) }, nil
}

// release ends a stream's hold: the node's last stream of nick holds the
// claim for the grace more.
func (c *KVClaims) release(nick, node string) {
	c.mu.Lock()
	c.local[nick]--
	last := c.local[nick] == 0
	if last {
		delete(c.local, nick)
	}
	c.mu.Unlock()
	if !last {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Wait)
	defer cancel()
	err := c.update(ctx, nick, func(cur *storedClaim) (*storedClaim, error) {
		if cur == nil || cur.Holds[node] == 0 {
			return nil, nil
		}
		c.mu.Lock()
		back := c.local[nick] > 0 // a stream came back meanwhile: it renews
		c.mu.Unlock()
		if back {
			return nil, nil
		}
		next := &storedClaim{Hash: cur.Hash, Holds: maps.Clone(cur.Holds)}
		next.Holds[node] = time.Now().Add(max(c.cfg.Grace, 0)).UnixNano()
		return next, nil
	})
	if err != nil {
		// The hold ends by itself within claimLease.
		c.cfg.Logger.Warn("chat NATS: release a nick claim", "nick", nick, "err", err)
	}
}

// renew keeps this node's holds ahead, every claimRenew, while it has any.
func (c *KVClaims) renew() {
	t := time.NewTicker(claimRenew)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-c.cfg.Quit:
			return
		}
		c.mu.Lock()
		nicks := make([]string, 0, len(c.local))
		for n := range c.local {
			nicks = append(nicks, n)
		}
		c.mu.Unlock()
		node := c.cfg.Node()
		for _, nick := range nicks {
			ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Wait)
			err := c.update(ctx, nick, func(cur *storedClaim) (*storedClaim, error) {
				c.mu.Lock()
				held := c.local[nick] > 0
				c.mu.Unlock()
				if cur == nil || !held {
					return nil, nil
				}
				next := &storedClaim{Hash: cur.Hash, Holds: maps.Clone(cur.Holds)}
				now := time.Now()
				for n, until := range next.Holds {
					if until <= now.UnixNano() {
						delete(next.Holds, n) // passed: forget the node
					}
				}
				next.Holds[node] = now.Add(claimLease).UnixNano()
				return next, nil
			})
			cancel()
			if err != nil {
				c.cfg.Logger.Warn("chat NATS: renew a nick claim", "nick", nick, "err", err)
			}
		}
	}
}

func (c *KVClaims) Check(ctx context.Context, nick, shown string) error {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	kv, err := c.bucket(ctx)
	if err != nil {
		return err
	}
	e, err := settle(ctx, func() (jetstream.KeyValueEntry, error) { return kv.Get(ctx, claimKey(nick)) })
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: nick claims: %v", c.cfg.Unavailable, err)
	}
	var cur storedClaim
	if json.Unmarshal(e.Value(), &cur) != nil {
		return nil
	}
	if cur.live(time.Now()) && !cur.matches(shown) {
		return claimedError(nick, c.cfg.Grace)
	}
	return nil
}

// keepHold is the hold of a claim that Keep renews: its mailbox's.
const keepHold = "mail"

func (c *KVClaims) Keep(ctx context.Context, nick string) error {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	return c.update(ctx, nick, func(cur *storedClaim) (*storedClaim, error) {
		now := time.Now()
		if cur == nil || !cur.live(now) {
			return nil, nil
		}
		next := &storedClaim{Hash: cur.Hash, Holds: maps.Clone(cur.Holds)}
		next.Holds[keepHold] = max(next.Holds[keepHold], now.Add(max(c.cfg.Grace, 0)).UnixNano())
		return next, nil
	})
}

// MayBeClaimed: any nick may be claimed on another node; the fast path
// hands every send to net/http, which asks the bucket.
func (c *KVClaims) MayBeClaimed(string) bool { return true }
