package load

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"runtime"
	"testing"
)

// benchmarkClient measures one client's cost per request against a loopback server, one
// connection, keep-alive: allocations are what this benchmark is for.
func benchmarkClient(b *testing.B, c Client) {
	srv := fixedServer(b)
	o := Options{Request: Request{URL: srv}, Connections: 1, Requests: 1, Client: c}
	r := &httpRun{o: &o}
	cl, err := r.newClient()
	if err != nil {
		b.Fatal(err)
	}
	defer cl.close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if status, _, err := cl.do(ctx); err != nil || status != 200 {
			b.Fatal(status, err)
		}
	}
}

// fixedServer answers every request with the same bytes and allocates nothing per request,
// so that the benchmark's allocations are the client's.
func fixedServer(b testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	answer := []byte("HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Type: text/plain\r\n\r\nhello, load\n")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					if bytes.HasSuffix(buf[:n], []byte("\r\n\r\n")) {
						c.Write(answer)
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

func BenchmarkRawClient(b *testing.B) { benchmarkClient(b, ClientRaw) }
func BenchmarkStdClient(b *testing.B) { benchmarkClient(b, ClientStd) }

// BenchmarkMetricsAdd is the per-request cost of the statistics.
func BenchmarkMetricsAdd(b *testing.B) {
	m := NewMetrics()
	res := Result{Status: 200, Bytes: 120}
	b.ReportAllocs()
	for b.Loop() {
		res.Latency += 1000
		res.Service = res.Latency
		m.Add(&res, 0)
	}
}

// BenchmarkRespParser is the cost of parsing one answer that arrives in one read: zero
// allocations once the parser's buffers have grown.
func BenchmarkRespParser(b *testing.B) {
	for _, tc := range []struct{ name, answer string }{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Type: text/plain\r\nDate: Tue, 01 Dec 2026 00:00:00 GMT\r\n\r\nhello, load\n"},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n5\r\nhello\r\n7\r\n, load\n\r\n0\r\n\r\n"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			answer := []byte(tc.answer)
			var p respParser
			b.ReportAllocs()
			b.SetBytes(int64(len(answer)))
			for b.Loop() {
				p.reset()
				if _, done, err := p.feed(answer); !done || err != nil || p.status != 200 {
					b.Fatal(done, err, p.status)
				}
			}
		})
	}
}

// BenchmarkEpollClient is the event-loop client's cost per request against the same loopback
// server, one connection, keep-alive (the run's setup is amortized over b.N requests).
func BenchmarkEpollClient(b *testing.B) {
	if !epollSupported {
		b.Skip("the epoll client needs Linux")
	}
	srv := fixedServer(b)
	for _, c := range []int{1, 8} {
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			b.ReportAllocs()
			n := max(b.N, c)
			rep, err := Run(context.Background(), Options{Request: Request{URL: srv}, Connections: c, Requests: n, Client: ClientEpoll})
			if err != nil || rep.OK != int64(n) {
				b.Fatal(err, rep.OK, rep.ErrorExamples)
			}
		})
	}
}

// TestEpollClientAllocations: once a run is set up, the event-loop client allocates nothing
// per request (the allocations of two runs that differ only in their request count are
// compared; what they share is the setup).
func TestEpollClientAllocations(t *testing.T) {
	if !epollSupported {
		t.Skip("the epoll client needs Linux")
	}
	srv := fixedServer(t)
	run := func(n int) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rep, err := Run(context.Background(), Options{Request: Request{URL: srv}, Connections: 4, Requests: n, Client: ClientEpoll})
		runtime.ReadMemStats(&after)
		if err != nil || rep.OK != int64(n) {
			t.Fatalf("run of %d requests: %v, %d ok, errors %v", n, err, rep.OK, rep.ErrorExamples)
		}
		return after.Mallocs - before.Mallocs
	}
	run(100) // first use: the runtime's own one-time allocations
	const extra = 10000
	// Setup allocations vary a little from run to run (timers, goroutines, whatever else the
	// test process runs); 100 in 10,000 requests is that noise, while one allocation per
	// request would be 10,000. The least of three tries is kept.
	var diff uint64
	for try := range 3 {
		small, large := run(200), run(200+extra)
		d := uint64(0)
		if large > small {
			d = large - small
		}
		if try == 0 || d < diff {
			diff = d
		}
	}
	if diff > 100 {
		t.Errorf("%d more allocations for %d more requests: %.3f per request, want 0", diff, extra, float64(diff)/extra)
	}
}
