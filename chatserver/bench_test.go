package chatserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchReceivers joins n users straight on the hub (no network) and drains
// their queues, counting the events they receive.
func benchReceivers(b *testing.B, ts *testServer, n int, got *atomic.Int64) (stop func()) {
	b.Helper()
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	for i := range n {
		c, res, leave := ts.srv.join(ctx, fmt.Sprint("r", i), 0, false)
		if res.err != nil {
			b.Fatal(res.err)
		}
		wg.Go(func() {
			defer leave()
			for {
				select {
				case <-c.queue:
					got.Add(1)
				case <-c.cut:
					b.Errorf("receiver cut: %s", c.cutReason())
					return
				case <-ctx.Done():
					return
				}
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

// BenchmarkBroadcast measures fan-out: each op is one message to "all",
// stored once and delivered to every receiver's queue.
func BenchmarkBroadcast(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprint("receivers=", n), func(b *testing.B) {
			ts := startServer(b, Options{QueueSize: 1 << 16, SendRate: -1})
			var got atomic.Int64
			stop := benchReceivers(b, ts, n, &got)
			defer stop()
			// Wait for the join notices to settle, then count from zero.
			time.Sleep(50 * time.Millisecond)
			got.Store(0)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := ts.srv.send(context.Background(), Post{From: "sender", To: "all", Text: "hello"}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			want := int64(b.N) * int64(n)
			for got.Load() < want {
				time.Sleep(time.Millisecond)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "deliveries/s")
		})
	}
}

// BenchmarkSend measures private sends through the hub and the store
// (validation, rate limit, group commit, delivery), without and with HTTP.
func BenchmarkSend(b *testing.B) {
	b.Run("hub", func(b *testing.B) {
		ts := startServer(b, Options{QueueSize: 1 << 20, SendRate: -1})
		var got atomic.Int64
		stop := benchReceivers(b, ts, 1, &got)
		defer stop()
		time.Sleep(20 * time.Millisecond)
		got.Store(0)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := ts.srv.send(context.Background(), Post{From: "mary", To: "r0", Text: "hello"}); err != nil {
					b.Error(err)
					return
				}
			}
		})
		for got.Load() < int64(b.N) {
			time.Sleep(time.Millisecond)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	})
	b.Run("http-get-msg", func(b *testing.B) {
		ts := startServer(b, Options{QueueSize: 1 << 20, SendRate: -1})
		var got atomic.Int64
		stop := benchReceivers(b, ts, 1, &got)
		defer stop()
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		u := ts.url + "/msg/mary/" + url.PathEscape("r0 hello")
		time.Sleep(20 * time.Millisecond)
		got.Store(0)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				resp, err := hc.Get(u)
				if err != nil {
					b.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("status %s", resp.Status)
					return
				}
			}
		})
		for got.Load() < int64(b.N) {
			time.Sleep(time.Millisecond)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	})
}
