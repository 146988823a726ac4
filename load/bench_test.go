package load

import (
	"bytes"
	"context"
	"net"
	"testing"
)

// benchmarkClient measures one client's cost per request against a loopback server, one
// connection, keep-alive: allocations are what this benchmark is for.
func benchmarkClient(b *testing.B, c Client) {
	srv := fixedServer(b)
	o := Options{Request: Request{URL: srv}, Connections: 1, Requests: 1, Client: c}
	r := &runner{o: &o}
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
func fixedServer(b *testing.B) string {
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
