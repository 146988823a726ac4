package chatserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/wasmgap/wasmgap/chatserver/internal/stream"
)

// benchReceivers joins n users straight on the hub (no network) and drains
// their queues, counting the events they receive.
func benchReceivers(b *testing.B, ts *testServer, n int, got *atomic.Int64) (stop func()) {
	b.Helper()
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	for i := range n {
		c, res, leave := ts.srv.node.join(ctx, fmt.Sprint("r", i), 0, false)
		if res.err != nil {
			b.Fatal(res.err)
		}
		ready := make(chan struct{}, 1)
		c.OnWake(func(bool) {
			select {
			case ready <- struct{}{}:
			default:
			}
		})
		wg.Go(func() {
			defer leave()
			var spare []*stream.Event
			for {
				select {
				case <-ready:
					spare = c.Take(spare)
					got.Add(int64(len(spare)))
					clear(spare)
				case <-c.Gone:
					b.Errorf("receiver cut: %s", c.CutReason())
					return
				case <-ctx.Done():
					return
				}
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

// waitCount waits until got reaches want, failing the benchmark if it does
// not within a bound that holds on a loaded machine.
func waitCount(b *testing.B, got *atomic.Int64, want int64) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for got.Load() < want {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d events arrived within 2m", got.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// senders is how many goroutines per GOMAXPROCS send at once in the
// benchmarks: like ab -c, it bounds how many sends one store commit can
// carry (group commit).
const senders = 8

// durability runs a benchmark with fsync on every commit (the default) and
// without (Options.NoSync).
func durability(b *testing.B, run func(b *testing.B, o Options)) {
	for _, noSync := range []bool{false, true} {
		name := "fsync"
		if noSync {
			name = "nofsync"
		}
		// Every join told at once: BenchmarkBroadcast counts the notices.
		b.Run(name, func(b *testing.B) {
			run(b, Options{NoSync: noSync, QueueSize: 1 << 20, SendRate: -1, PresenceWindow: -1})
		})
	}
}

// BenchmarkBroadcast measures fan-out: each op is one message to "all",
// stored once and delivered to every receiver's queue.
func BenchmarkBroadcast(b *testing.B) {
	durability(b, func(b *testing.B, o Options) {
		for _, n := range []int{10, 100, 1000} {
			b.Run(fmt.Sprint("receivers=", n), func(b *testing.B) {
				ts := startServer(b, o)
				var got atomic.Int64
				stop := benchReceivers(b, ts, n, &got)
				defer stop()
				// Let the join notices arrive (receiver i hears of those
				// after it), then count from zero.
				waitCount(b, &got, int64(n*(n-1)/2))
				got.Store(0)
				b.SetParallelism(senders)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, _, err := ts.srv.send(context.Background(), message{From: "sender", To: "all", Text: "hello"}); err != nil {
							b.Error(err)
							return
						}
					}
				})
				want := int64(b.N) * int64(n)
				waitCount(b, &got, want)
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
				b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "deliveries/s")
			})
		}
	})
}

// BenchmarkSend measures private sends to one receiver: through the hub
// and the store (validation, rate limit, group commit, delivery), then the
// same with the article's GET /msg route over HTTP in front.
func BenchmarkSend(b *testing.B) {
	durability(b, func(b *testing.B, o Options) {
		b.Run("hub", func(b *testing.B) {
			ts := startServer(b, o)
			var got atomic.Int64
			stop := benchReceivers(b, ts, 1, &got)
			defer stop()
			got.Store(0)
			b.SetParallelism(senders)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, _, err := ts.srv.send(context.Background(), message{From: "mary", To: "r0", Text: "hello"}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			waitCount(b, &got, int64(b.N))
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
		b.Run("http-get-msg", func(b *testing.B) {
			ts := startServer(b, o)
			var got atomic.Int64
			stop := benchReceivers(b, ts, 1, &got)
			defer stop()
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
			u := ts.url + "/msg/mary/" + url.PathEscape("r0 hello")
			got.Store(0)
			b.SetParallelism(senders)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := hc.Get(u)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body) // so the connection is reused
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Errorf("status %s", resp.Status)
						return
					}
				}
			})
			waitCount(b, &got, int64(b.N))
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
		b.Run("ws-frames-one-conn", func(b *testing.B) {
			ts := startServer(b, o)
			var got atomic.Int64
			stop := benchReceivers(b, ts, 1, &got)
			defer stop()
			ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.url, "http")+"/ws?nick=mary", nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ws.Close()
			go func() { // drain mary's own events (welcome lines, echoes)
				for {
					if _, _, err := ws.ReadMessage(); err != nil {
						return
					}
				}
			}()
			frame := []byte(`{"to":"r0","text":"hello"}`)
			waitCount(b, &got, 1) // "mary has joined."
			got.Store(0)
			b.ResetTimer()
			for range b.N {
				if err := ws.WriteMessage(websocket.TextMessage, frame); err != nil {
					b.Fatal(err)
				}
			}
			waitCount(b, &got, int64(b.N))
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	})
}
