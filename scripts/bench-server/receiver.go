//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// receiver is a user logged in over SSE who counts the events that read want.
type receiver struct {
	count  atomic.Int64
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	ended  error // why the stream ended, if it did before close
}

// startReceiver logs nick in at base and returns once the server has welcomed it.
func startReceiver(ctx context.Context, base, nick, want string) (*receiver, error) {
	ctx, cancel := context.WithCancel(ctx)
	r := &receiver{cancel: cancel, done: make(chan struct{})}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/"+nick, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}}
	welcomed := make(chan struct{})
	failed := make(chan error, 1)
	go func() {
		defer close(r.done)
		resp, err := client.Do(req)
		if err != nil {
			failed <- err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			failed <- fmt.Errorf("GET /%s answered %s", nick, resp.Status)
			return
		}
		br := bufio.NewReaderSize(resp.Body, 64<<10)
		wantLine, welcome := "data: "+want, "data: Welcome "+nick+"!"
		greeted := false
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				if !greeted {
					failed <- fmt.Errorf("the stream ended before the welcome: %v", err)
				}
				r.mu.Lock()
				r.ended = err
				r.mu.Unlock()
				return
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == wantLine:
				r.count.Add(1)
			case !greeted && line == welcome:
				greeted = true
				close(welcomed)
			}
		}
	}()
	select {
	case <-welcomed:
		return r, nil
	case err := <-failed:
		cancel()
		<-r.done
		return nil, fmt.Errorf("log %s in over SSE: %w", nick, err)
	case <-time.After(10 * time.Second):
		cancel()
		<-r.done
		return nil, fmt.Errorf("log %s in over SSE: no welcome within 10 s", nick)
	}
}

// waitFor waits until n events have arrived, or no new one has for idle, and returns the count.
func (r *receiver) waitFor(ctx context.Context, n int64, idle time.Duration) int64 {
	last, lastChange := r.count.Load(), time.Now()
	for {
		c := r.count.Load()
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
			return r.count.Load()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// err is why the stream ended before close, or nil.
func (r *receiver) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended != nil && !errors.Is(r.ended, context.Canceled) {
		return r.ended
	}
	return nil
}

func (r *receiver) close() {
	r.cancel()
	<-r.done
}
