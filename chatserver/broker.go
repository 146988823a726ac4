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
	// Addr is the sender's address, set by the routes (never a client's
	// word): the offline mail waiting from one address is bounded (its
	// oldest unread goes first).
	Addr string `json:"addr,omitempty"`
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
	// PublishAsync hands p on without waiting for it to be stored, so that
	// one client's stream of posts (a WebSocket's frames) shares the hub's
	// store commits instead of paying one each. The posts one goroutine
	// publishes are delivered in the order it published them. wait, called
	// once, blocks until p was stored and delivered, or failed, and returns
	// what Publish would have. A bus-backed broker publishes without waiting
	// for the bus's acknowledgement and lets wait collect it.
	PublishAsync(ctx context.Context, p Post) (wait func() (Receipt, error), err error)
	// Subscribe registers the hub that delivers every post. A server
	// subscribes exactly once, in New.
	Subscribe(h Hub) error
	// Close stops the broker; Publish fails afterwards.
	Close() error
}

// Hub is the side of a Server that a Broker delivers posts to.
type Hub interface {
	// Deliver stores p and delivers it to the users connected here, and
	// returns once it did, or with the error that prevented it.
	Deliver(ctx context.Context, p Post) (Receipt, error)
	// DeliverAsync hands p to the hub in order and returns at once; wait,
	// called once, returns what Deliver would have.
	DeliverAsync(ctx context.Context, p Post) (wait func() (Receipt, error), err error)
}

// ErrBrokerClosed is returned by Publish after Close, or before any hub subscribed.
var ErrBrokerClosed = errors.New("broker closed")

// NewLocalBroker returns the in-process broker, the default of Options.Broker:
// Publish calls the subscribed hub directly.
func NewLocalBroker() Broker { return &localBroker{} }

type localBroker struct {
	mu     sync.RWMutex
	hub    Hub
	closed bool
}

// subscribed is the hub to deliver to, or ErrBrokerClosed.
func (b *localBroker) subscribed() (Hub, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed || b.hub == nil {
		return nil, ErrBrokerClosed
	}
	return b.hub, nil
}

func (b *localBroker) Publish(ctx context.Context, p Post) (Receipt, error) {
	h, err := b.subscribed()
	if err != nil {
		return Receipt{}, err
	}
	return h.Deliver(ctx, p)
}

func (b *localBroker) PublishAsync(ctx context.Context, p Post) (func() (Receipt, error), error) {
	h, err := b.subscribed()
	if err != nil {
		return nil, err
	}
	return h.DeliverAsync(ctx, p)
}

func (b *localBroker) Subscribe(h Hub) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrBrokerClosed
	}
	if b.hub != nil {
		return errors.New("local broker: a hub is already subscribed")
	}
	b.hub = h
	return nil
}

func (b *localBroker) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return nil
}
