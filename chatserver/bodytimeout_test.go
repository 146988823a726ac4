package chatserver

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// slowBody starts a request whose headers arrive at once and whose body
// then trickles in, one byte per tick, until the server cuts it or stop
// closes; it returns what the server answered ("" when it just closed).
func slowBody(t *testing.T, addr, method, path string, tick time.Duration, stop <-chan struct{}) <-chan string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write([]byte(method + " " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 600 { // bounded: at most 600 ticks
			select {
			case <-stop:
				return
			case <-time.After(tick):
			}
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
		}
	})
	answer := make(chan string, 1)
	go func() {
		defer wg.Wait()
		c.SetReadDeadline(time.Now().Add(waitFor))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				answer <- "still open"
			} else {
				answer <- ""
			}
			c.Close()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		c.Close()
		answer <- resp.Status + " " + string(b)
	}()
	return answer
}

// TestSlowBodyCut is the reproduction: full headers, then 1 byte of body a
// second. The send routes cut such a client after BodyTimeout.
func TestSlowBodyCut(t *testing.T) {
	ts := startServer(t, Options{BodyTimeout: 500 * time.Millisecond})
	addr := strings.TrimPrefix(ts.url, "http://")
	stop := make(chan struct{})
	defer close(stop)
	for _, path := range []string{"/send", "/msg/mary/john%20hi"} {
		got := <-slowBody(t, addr, "POST", path, time.Second, stop)
		if got == "still open" {
			t.Fatalf("POST %s: a body sent at 1 byte/s was still being read after %v", path, waitFor)
		}
		if path == "/send" && !strings.Contains(got, "408") {
			t.Errorf("POST /send with a slow body: %q, want 408 saying the body did not arrive in time", got)
		}
	}
}

// TestShutdownWithSlowBodies: Serve drains cleanly (nil) while clients are
// trickling request bodies: each is cut by its body deadline.
func TestShutdownWithSlowBodies(t *testing.T) {
	ts, stopServer := serveOn(t, Options{BodyTimeout: 500 * time.Millisecond, WriteTimeout: time.Second})
	stop := make(chan struct{})
	defer close(stop)
	var answers []<-chan string
	for range 5 {
		answers = append(answers, slowBody(t, ts.hostPort(), "POST", "/send", time.Second, stop))
	}
	time.Sleep(100 * time.Millisecond) // the requests are in their handlers
	stopServer()                       // fails the test unless Serve drains cleanly (returns nil)
	for _, a := range answers {
		if got := <-a; got == "still open" {
			t.Error("a slow body outlived the shutdown")
		}
	}
}

// TestSlowBodyMounted: mounted as `wasmgap serve` mounts it, behind the
// server's own body deadline (httpguard.LimitBody), a slow body on
// POST /send gets 408 too, not 400.
func TestSlowBodyMounted(t *testing.T) {
	srv, err := New(Options{DataDir: t.TempDir(), BodyTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	hs := httptest.NewServer(http.StripPrefix("/chat", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpguard.LimitBody(w, r, 500*time.Millisecond)
		srv.Handler().ServeHTTP(w, r)
	})))
	t.Cleanup(hs.Close)
	stop := make(chan struct{})
	defer close(stop)
	got := <-slowBody(t, strings.TrimPrefix(hs.URL, "http://"), "POST", "/chat/send", time.Second, stop)
	if !strings.Contains(got, "408") || !strings.Contains(got, "did not arrive within") {
		t.Errorf("POST /chat/send with a slow body: %q, want 408 saying the body did not arrive in time", got)
	}
}
