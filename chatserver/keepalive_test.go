package chatserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func TestSSEKeepAlive(t *testing.T) {
	ts := startServer(t, Options{KeepAlive: 20 * time.Millisecond})
	c := ts.login(t, "sse", "john")
	c.expect("Welcome john!", "now online: ")
	select {
	case got := <-c.comments:
		if got != "ping" {
			t.Fatalf("comment %q, want ping", got)
		}
	case <-time.After(waitFor):
		t.Fatal("no keep-alive comment")
	}
}

// TestWebSocketPing: pings keep an answering client connected; a client that
// never answers is closed after two intervals.
func TestWebSocketPing(t *testing.T) {
	ts := startServer(t, Options{KeepAlive: 300 * time.Millisecond})
	live := ts.login(t, "ws", "live") // reads, so gorilla answers pings
	live.expect("Welcome live!", "now online: ")
	var pings atomic.Int32
	live.ws.SetPingHandler(func(data string) error {
		pings.Add(1)
		return live.ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})

	mute, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.url, "http")+"/ws?nick=mute", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close() // never read: pings go unanswered
	ts.waitStreams(t, "mute", 1)
	ts.waitStreams(t, "mute", -1)
	if ts.streams("live") != 1 {
		t.Fatal("the answering client was closed too")
	}
	if pings.Load() == 0 {
		t.Error("the answering client saw no ping")
	}
}

func TestRetention(t *testing.T) {
	ts := startServer(t, Options{Retention: time.Hour})
	now := ts.setClock() // records are stamped and pruned by it
	john := ts.login(t, "sse", "john")
	john.expect("Welcome john!", "now online: ")
	mark := john.lastID
	ts.msg(t, "mary", "all", "old")
	john.expect("mary to all: old")
	now.Add(int64(2 * time.Hour))
	ts.prune()
	ts.msg(t, "mary", "all", "new")
	john.expect("mary to all: new")
	again := ts.resume(t, "ws", "john", strconv.FormatUint(mark, 10))
	again.expect("mary to all: new", "Welcome john!", "now online: john")
	select {
	case e := <-again.errs:
		if !strings.Contains(e, "older than the retention window (1h0m0s)") {
			t.Errorf("resume across pruned events: error %q", e)
		}
	default:
		t.Error("a resume across pruned events was not told")
	}
	// A resume from after the pruned events hears nothing of it.
	later := ts.resume(t, "sse", "john", strconv.FormatUint(again.lastID, 10))
	later.expect("Welcome john!")
	if len(later.comments) > 0 {
		t.Errorf("unexpected comment %q", <-later.comments)
	}
}

func TestListenLocalhost(t *testing.T) {
	ln, err := Listen("localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	for _, host := range []string{"127.0.0.1", "[::1]"} {
		resp, err := http.Get("http://" + host + ":" + port + "/")
		if err != nil {
			if host == "[::1]" {
				t.Logf("no IPv6 loopback here: %v", err)
				continue
			}
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %s", host, resp.Status)
		}
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if _, err := Listen("nonsense"); err == nil || !strings.Contains(err.Error(), "use host:port") {
		t.Errorf("Listen(nonsense) = %v", err)
	}
}

// TestHeaderTimeout: Serve closes a connection whose request headers do not
// arrive in time (a slowloris client).
func TestHeaderTimeout(t *testing.T) {
	srv, err := New(Options{DataDir: t.TempDir(), ReadHeaderTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx, ln)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n")) // and never the blank line
	c.SetReadDeadline(time.Now().Add(waitFor))
	buf := make([]byte, 512)
	for {
		_, err := c.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("the server kept a connection whose headers never came")
		}
		if err != nil {
			break // closed by the server
		}
	}
}

// TestOpenConnsPerAddr: Serve holds at most MaxOpenConnsPerAddr open
// connections of one client address (its default follows MaxConnsPerAddr);
// one more is answered 429 with the reason.
func TestOpenConnsPerAddr(t *testing.T) {
	for _, c := range []struct{ streams, open, want int }{{0, 0, 2000}, {10, 0, 20}, {-1, 0, -1}, {-1, 7, 7}} {
		o := Options{MaxConnsPerAddr: c.streams, MaxOpenConnsPerAddr: c.open}
		if o.setDefaults(); o.MaxOpenConnsPerAddr != c.want {
			t.Errorf("MaxConnsPerAddr %d, MaxOpenConnsPerAddr %d: default %d, want %d", c.streams, c.open, o.MaxOpenConnsPerAddr, c.want)
		}
	}
	ts, _ := serveOn(t, Options{LeaveGrace: -1, MaxOpenConnsPerAddr: 2})
	bob := ts.login(t, "sse", "bob") // a stream is one connection
	bob.expect("Welcome bob!", "now online: ")
	page := dialPage(t, ts.hostPort())
	page.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	if resp, _ := page.answer("GET"); resp.StatusCode != 200 {
		t.Fatalf("page: %s", resp.Status)
	}
	third := dialPage(t, ts.hostPort())
	third.send("GET /msg/mary/bob%20hi HTTP/1.1\r\nHost: localhost\r\n\r\n")
	if resp, body := third.answer("GET"); resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "too many connections from 127.0.0.1") {
		t.Fatalf("a third connection: %s %q", resp.Status, body)
	}
}
