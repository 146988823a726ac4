//go:build linux

package main

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wasmgap/wasmgap/internal/benchtool"
	"github.com/wasmgap/wasmgap/load"
)

// maxChurnInFlight bounds the churn's connections open at once: past it, the next connect
// waits, and its connect time (counted from when it was due) shows the wait.
const maxChurnInFlight = 2000

// churnRun opens o.churn WebSocket connections per second for o.churnTime against a fresh
// server, each logging in, waiting for the server's first answer and closing, and adds the
// attempts, errors, the p99 connect time (from when each connect was due, so that a server
// that falls behind is not flattered) and the server's CPU per connection to c.
func churnRun(ctx context.Context, o *options, c *churnRow) error {
	srv, err := startFanoutServer(ctx, o, c.server)
	if err != nil {
		return err
	}
	defer srv.stop()
	pids := benchtool.GroupPIDs(srv.pgid())
	cpu0 := benchtool.CPUTime(pids...)
	total := int(float64(o.churn) * o.churnTime.Seconds())
	interval := time.Second / time.Duration(o.churn)
	dialer := &websocket.Dialer{HandshakeTimeout: 10 * time.Second, ReadBufferSize: 4096, WriteBufferSize: 1024}
	var (
		mu        sync.Mutex
		latencies = make([]time.Duration, 0, total)
		errs      int64
		firstErr  error
		wg        sync.WaitGroup
	)
	sem := make(chan struct{}, maxChurnInFlight)
	start := time.Now()
	for i := range total {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		}
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := churnOne(ctx, dialer, srv.url, c.server, "churn"+strconv.Itoa(i))
			took := time.Since(due)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs++
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			latencies = append(latencies, took)
		})
	}
	wg.Wait()
	cpu := benchtool.CPUTime(pids...) - cpu0
	if ctx.Err() != nil {
		return ctx.Err()
	}
	c.attempts += int64(total)
	c.errors += errs
	if len(latencies) == 0 {
		return fmt.Errorf("no connection succeeded: %v", firstErr)
	}
	slices.Sort(latencies)
	c.p99 = append(c.p99, latencies[(len(latencies)*99)/100])
	c.cpuPer = append(c.cpuPer, cpu/time.Duration(total))
	if firstErr != nil {
		c.err = fmt.Errorf("%d of %d connections failed, first: %w", errs, total, firstErr)
	}
	return nil
}

// churnOne logs one user in over WebSocket, waits for the server's first answer (the chat's
// welcome, Centrifugo's connect reply) and closes.
func churnOne(ctx context.Context, dialer *websocket.Dialer, base, server, nick string) error {
	u, _ := url.Parse(base)
	u.Scheme = "ws"
	var first []byte
	if server == "centrifugo" {
		u.Path = "/connection/websocket"
		first = fmt.Appendf(nil, `{"id":1,"connect":{"token":%q}}`, load.CentrifugoToken(centrifugoSecret, nick, load.DefaultCentrifugoChannel))
	} else {
		u.Path = "/ws"
		u.RawQuery = url.Values{"nick": {nick}}.Encode()
	}
	conn, _, err := dialer.DialContext(ctx, u.String(), nil)
	if err != nil {
		return err
	}
	defer conn.Close()
	if first != nil {
		if err := conn.WriteMessage(websocket.TextMessage, first); err != nil {
			return err
		}
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, msg, err := conn.ReadMessage()
	if err != nil {
		return err
	}
	if strings.Contains(string(msg), `"error"`) {
		return fmt.Errorf("refused: %.200s", msg)
	}
	conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	return nil
}
