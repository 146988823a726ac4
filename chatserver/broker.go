package chatserver

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Post is one message a user sends: to one user or to "all".
// It is what travels through a Broker.
type Post struct {
	From string    `json:"from"`
	To   string    `json:"to"`
	Text string    `json:"text"`
	Time time.Time `json:"time"`
}

// Receipt is what publishing a post did.
type Receipt struct {
	// Offline: the receiver had no open stream; the message waits in its
	// mailbox for up to Kept (the retention) and is delivered at its next login.
	Offline bool
	Kept    time.Duration
}

// Broker carries posts from the transports that accept them to the hub that
// delivers them. The in-process broker (the default) hands each post straight
// to this server's hub; a broker backed by a message bus would publish it to
// every node sharing the chat, each node's hub delivering it to the users
// connected there.
type Broker interface {
	// Publish hands p to the subscribed hub and returns once this node has
	// stored and delivered it, or with the error that prevented it.
	Publish(ctx context.Context, p Post) (Receipt, error)
	// Subscribe registers the function a hub applies to every post. A server
	// subscribes exactly once, in New.
	Subscribe(deliver func(context.Context, Post) (Receipt, error)) error
	// Close stops the broker; Publish fails afterwards.
	Close() error
}

// ErrBrokerClosed is returned by Publish after Close, or before any hub subscribed.
var ErrBrokerClosed = errors.New("broker closed")

// NewLocalBroker returns the in-process broker, the default of Options.Broker:
// Publish calls the subscribed hub directly.
func NewLocalBroker() Broker { return &localBroker{} }

type localBroker struct {
	mu      sync.RWMutex
	deliver func(context.Context, Post) (Receipt, error)
	closed  bool
}

func (b *localBroker) Publish(ctx context.Context, p Post) (Receipt, error) {
	b.mu.RLock()
	deliver, closed := b.deliver, b.closed
	b.mu.RUnlock()
	if closed || deliver == nil {
		return Receipt{}, ErrBrokerClosed
	}
	return deliver(ctx, p)
}

func (b *localBroker) Subscribe(deliver func(context.Context, Post) (Receipt, error)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrBrokerClosed
	}
	if b.deliver != nil {
		return errors.New("local broker: a hub is already subscribed")
	}
	b.deliver = deliver
	return nil
}

func (b *localBroker) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return nil
}
