package load

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"
)

// TestSubscriberResumesOnLoop: a stream the server cuts is reconnected with Last-Event-ID, and
// the events of both connections arrive, whether the stream is read on an event loop (Linux)
// or on the receiver's goroutine.
func TestSubscriberResumesOnLoop(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lastIDs := make(chan string, 2)
	go func() {
		for i := 0; ; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			req, err := http.ReadRequest(bufio.NewReader(c))
			if err != nil {
				c.Close()
				continue
			}
			lastIDs <- req.Header.Get("Last-Event-ID")
			head := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
			if i == 0 {
				// The first event split across writes, then the connection cut.
				c.Write([]byte(head + "id: 1\ndata: Wel"))
				time.Sleep(10 * time.Millisecond)
				c.Write([]byte("come!\n\n"))
				c.Close()
				continue
			}
			c.Write([]byte(head + "id: 2\ndata: hello " + testToken + "0\n\n"))
			defer c.Close() // held open until the listener closes
		}
	}()

	var loops *streamLoops
	if streamLoopsSupported {
		if loops, err = newStreamLoops(1); err != nil {
			t.Fatal(err)
		}
		defer loops.stop()
	}
	base, _ := url.Parse("http://" + ln.Addr().String() + "/")
	s := &subscriber{t: newStreamTarget(base, chatProtocol{}, testToken), nick: "n", transport: "sse",
		timeout: 10 * time.Second, loops: loops}
	before := streamsOnLoops.Load()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var got []event
	done := make(chan error, 1)
	go func() {
		done <- s.run(ctx, func() {}, func(ev event) {
			mu.Lock()
			got = append(got, ev)
			n := len(got)
			mu.Unlock()
			if n == 2 {
				cancel()
			}
		})
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []event{{id: 1}, {id: 2, text: "hello " + testToken + "0"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("events %+v, want %+v", got, want)
	}
	if first, second := <-lastIDs, <-lastIDs; first != "" || second != "1" {
		t.Errorf("Last-Event-ID %q then %q, want none then 1", first, second)
	}
	if on := streamsOnLoops.Load() - before; streamLoopsSupported && on != 2 {
		t.Errorf("%d streams read on the loop, want both", on)
	}
	if s.reconnects != 1 {
		t.Errorf("%d reconnects, want 1", s.reconnects)
	}
}
