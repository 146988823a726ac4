package load

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// A Receiver is one user logged in at a chat over SSE, counting the events whose text is a
// given one: how a run whose sends go through the chat (ab's, the seed's) is checked for
// messages lost. It resumes after a dropped stream, as the chat's clients do.
type Receiver struct {
	sub    *subscriber
	count  atomic.Int64
	cancel context.CancelFunc
	done   chan struct{}
}

// Listen logs nick in at the chat at target (its base URL) and returns once the chat has
// welcomed it, within 10 s; from then on the receiver counts the events whose text is want,
// until Close.
func Listen(ctx context.Context, target, nick, want string) (*Receiver, error) {
	base, err := chatBase(target)
	if err != nil {
		return nil, fmt.Errorf("receiver's %w", err)
	}
	const timeout = 10 * time.Second
	ctx, cancel := context.WithCancel(ctx)
	r := &Receiver{sub: &subscriber{t: newStreamTarget(base, chatProtocol{}, want), nick: nick, transport: "sse", timeout: timeout},
		cancel: cancel, done: make(chan struct{})}
	ready := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		defer close(r.done)
		errc <- r.sub.run(ctx, func() { close(ready) }, func(ev event) {
			if ev.text == want {
				r.count.Add(1)
			}
		})
	}()
	select {
	case <-ready:
		return r, nil
	case err := <-errc:
		cancel()
		return nil, fmt.Errorf("log in the receiver %q: %w", nick, cmp.Or(err, ctx.Err()))
	case <-time.After(timeout):
		r.Close()
		return nil, fmt.Errorf("log in the receiver %q: no welcome within %s", nick, timeout)
	}
}

// Count is how many of the events it counts have arrived.
func (r *Receiver) Count() int64 { return r.count.Load() }

// WaitFor waits until n events have arrived, or none has for idle, and returns the count.
func (r *Receiver) WaitFor(ctx context.Context, n int64, idle time.Duration) int64 {
	last, lastChange := r.Count(), time.Now()
	for {
		c := r.Count()
		if c >= n || ctx.Err() != nil {
			return c
		}
		if c != last {
			last, lastChange = c, time.Now()
		} else if time.Since(lastChange) > idle {
			return c
		}
		select {
		case <-r.done:
			return r.Count()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Close logs the receiver out and returns how many times its stream dropped and resumed.
func (r *Receiver) Close() (reconnects int64) {
	r.cancel()
	<-r.done
	return r.sub.reconnects
}

// chatBase is a chat's base URL, ending in "/", or what is wrong with target.
func chatBase(target string) (*url.URL, error) {
	base, err := url.Parse(target)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("target %q: want the chat's absolute http:// URL, e.g. http://127.0.0.1:8080/", target)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	return base, nil
}
