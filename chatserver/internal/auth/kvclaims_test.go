package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

var errUnavailable = errors.New("chat unavailable")

// placingJS is a JetStream whose cluster places no bucket for its first
// refusals tries, as a cluster whose peers are still meeting answers.
type placingJS struct {
	jetstream.JetStream // the methods the claims' bucket does not call panic
	refusals            int32
	tries               atomic.Int32 // calls of CreateOrUpdateKeyValue
	made                bool         // another node made the bucket already
}

func (js *placingJS) KeyValue(_ context.Context, bucket string) (jetstream.KeyValue, error) {
	if !js.made {
		return nil, jetstream.ErrBucketNotFound
	}
	return placedKV{bucket: bucket}, nil
}

func (js *placingJS) Stream(context.Context, string) (jetstream.Stream, error) {
	return nil, jetstream.ErrStreamNotFound
}

func (js *placingJS) CreateOrUpdateKeyValue(_ context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	if js.tries.Add(1) <= js.refusals {
		return nil, &jetstream.APIError{Code: 400, ErrorCode: 10005, Description: "no suitable peers for placement, peer offline"}
	}
	return placedKV{bucket: cfg.Bucket}, nil
}

type placedKV struct {
	jetstream.KeyValue
	bucket string
}

// A bucket another node made is looked up, never updated: an update of a
// replicated bucket waits for every replica, which a loaded cluster may not
// give within the claim's wait.
func TestKVClaimsBucketMadeElsewhereIsLookedUp(t *testing.T) {
	js := &placingJS{made: true}
	c := NewKVClaims(KVConfig{JS: js, Stream: "chat", Wait: time.Minute, Unavailable: errUnavailable})
	kv, err := c.bucket(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := kv.(placedKV).bucket; got != claimBucket || js.tries.Load() != 0 {
		t.Errorf("bucket %q after %d updates, want %q after none", got, js.tries.Load(), claimBucket)
	}
}

// The claims' bucket is made once the cluster places it: the first claim
// on a cluster that is still starting waits for it instead of failing.
func TestKVClaimsBucketWaitsForPlacement(t *testing.T) {
	js := &placingJS{refusals: 3}
	c := NewKVClaims(KVConfig{JS: js, Stream: "chat", Wait: time.Minute, Unavailable: errUnavailable})
	kv, err := c.bucket(context.Background())
	if err != nil {
		t.Fatalf("bucket after %d refusals: %v", js.refusals, err)
	}
	if got := kv.(placedKV).bucket; got != claimBucket || js.tries.Load() != 4 {
		t.Errorf("bucket %q after %d tries, want %q after 4", got, js.tries.Load(), claimBucket)
	}
	if _, err := c.bucket(context.Background()); err != nil || js.tries.Load() != 4 {
		t.Errorf("second use: %v after %d tries; the bucket is made once", err, js.tries.Load())
	}
}

// Errors of a cluster still settling are waited out; others are not.
func TestSettling(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nats.ErrNoResponders, true},
		{fmt.Errorf("get: %w", nats.ErrNoResponders), true},
		{&jetstream.APIError{Code: 400, ErrorCode: 10005, Description: "no suitable peers for placement"}, true},
		{&jetstream.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}, true},
		{&jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}, false},
		{&jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamNameInUse}, false},
		{jetstream.ErrKeyNotFound, false},
		{errors.New("nats: authorization violation"), false},
	} {
		if got := settling(c.err); got != c.want {
			t.Errorf("settling(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// A cluster that never places the bucket within Wait refuses the claim as
// unavailable, with what NATS said.
func TestKVClaimsBucketUnplaced(t *testing.T) {
	js := &placingJS{refusals: 1 << 30}
	c := NewKVClaims(KVConfig{JS: js, Stream: "chat", Wait: 3 * settleRetry, Unavailable: errUnavailable})
	_, err := c.bucket(context.Background())
	if !errors.Is(err, errUnavailable) || !strings.Contains(err.Error(), "no suitable peers") || !strings.Contains(err.Error(), claimBucket) {
		t.Fatalf("bucket never placed: %v; want %v with NATS's reason", err, errUnavailable)
	}
	if js.tries.Load() < 2 {
		t.Errorf("%d tries: the bucket was not tried again", js.tries.Load())
	}
}
