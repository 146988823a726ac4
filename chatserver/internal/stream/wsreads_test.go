package stream

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/wasmgap/wasmgap/chatserver/internal/nbio"
)

// wsServer serves WebSockets read by WSReads with w (nil: none), each
// message's text sent back as a text frame, the pings answered; the reads'
// ends arrive on ended, with the server's side of each upgrade on reads.
type wsServer struct {
	url   string
	reads chan *WSReads
	ended chan error
}

func startWSServer(t *testing.T, w *nbio.Watcher, silence time.Duration) *wsServer {
	t.Helper()
	ts := &wsServer{reads: make(chan *WSReads, 100), ended: make(chan error, 100)}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		u, err := Upgrade(websocket.Upgrader{}, rw, r, nil)
		if err != nil {
			return
		}
		var mu sync.Mutex // the echo and the pong are written by two readers in turn
		u.WS.SetPingHandler(func(payload string) error {
			mu.Lock()
			defer mu.Unlock()
			return u.WS.WriteControl(websocket.PongMessage, []byte(payload), time.Now().Add(time.Second))
		})
		reads := NewWSReads(u, w, 64, silence)
		reads.Start(func(kind int, data []byte) bool {
			mu.Lock()
			defer mu.Unlock()
			return u.WS.WriteMessage(websocket.TextMessage, data) == nil && string(data) != "bye"
		}, func(err error) {
			u.WS.Close()
			ts.ended <- err
		})
		ts.reads <- reads
	}))
	t.Cleanup(srv.Close)
	ts.url = "ws" + strings.TrimPrefix(srv.URL, "http")
	return ts
}

func dialWS(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// echo sends text and reads it back.
func echo(t *testing.T, c *websocket.Conn, text string) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(text)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, got, err := c.ReadMessage(); err != nil || string(got) != text {
		t.Fatalf("echo of %q: %q, %v", text, got, err)
	}
}

// TestWSReadsIdleHoldsNoGoroutine: idle WebSockets read by WSReads with a
// watcher hold no goroutine, between messages as before the first; their
// messages and pings are answered all the same, a ping cut in two too.
func TestWSReadsIdleHoldsNoGoroutine(t *testing.T) {
	w, err := nbio.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ts := startWSServer(t, w, time.Hour)
	const conns = 50
	before := runtime.NumGoroutine()
	var clients []*websocket.Conn
	for range conns {
		clients = append(clients, dialWS(t, ts.url))
	}
	for i, c := range clients {
		echo(t, c, fmt.Sprintf("hello %d", i))
	}
	// gorilla's clients hold no goroutine; two readers of the test's own
	// join below.
	idle := func() bool { return runtime.NumGoroutine() <= before+2+conns/10 }
	waitUntil(t, "no server goroutine per idle WebSocket", idle)

	// A ping, read by the watch's call: the pong comes back.
	pongs := make(chan string, 4)
	c := clients[0]
	c.SetPongHandler(func(p string) error { pongs <- p; return nil })
	go func() {
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}()
	if err := c.WriteControl(websocket.PingMessage, []byte("are you there"), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	waitPong(t, pongs, "are you there")
	// A ping in two writes: the first half waits for the second, parked.
	raw := clients[1].NetConn()
	frame := maskedFrame(websocket.PingMessage, "split ping")
	if _, err := raw.Write(frame[:5]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the half is read and parked meanwhile
	if _, err := raw.Write(frame[5:]); err != nil {
		t.Fatal(err)
	}
	clients[1].SetReadDeadline(time.Now().Add(10 * time.Second))
	pong1 := make(chan string, 1)
	clients[1].SetPongHandler(func(p string) error { pong1 <- p; return nil })
	go clients[1].ReadMessage()
	waitPong(t, pong1, "split ping")
	waitUntil(t, "no server goroutine after the pings", idle)
	select {
	case err := <-ts.ended:
		t.Fatalf("reads ended: %v", err)
	default:
	}
}

func waitPong(t *testing.T, pongs <-chan string, want string) {
	t.Helper()
	select {
	case p := <-pongs:
		if p != want {
			t.Fatalf("pong %q, want %q", p, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no pong to %q within 10 s", want)
	}
}

// maskedFrame is a client's frame of kind with payload, masked.
func maskedFrame(kind int, payload string) []byte {
	key := [4]byte{1, 2, 3, 4}
	f := []byte{0x80 | byte(kind), 0x80 | byte(len(payload))}
	f = append(f, key[:]...)
	for i := range len(payload) {
		f = append(f, payload[i]^key[i%4])
	}
	return f
}

// TestWSReadsEnd: reads end once, with why: the client goes, a message's
// handler says stop, a message over the limit, a silent client, Stop —
// parked or not.
func TestWSReadsEnd(t *testing.T) {
	w, err := nbio.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, watcher := range []*nbio.Watcher{w, nil} {
		ts := startWSServer(t, watcher, 300*time.Millisecond)
		ended := func(what string, want error) {
			t.Helper()
			select {
			case err := <-ts.ended:
				if want == nil && err != nil && !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "close") || want != nil && !errors.Is(err, want) {
					t.Errorf("watcher %v: %s: ended with %v, want %v", watcher != nil, what, err, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("watcher %v: %s: the reads did not end", watcher != nil, what)
			}
		}
		// Pongs keep a client that answers pings alive past the silence.
		live := dialWS(t, ts.url)
		<-ts.reads
		for range 4 {
			time.Sleep(100 * time.Millisecond)
			if err := live.WriteControl(websocket.PongMessage, nil, time.Now().Add(time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case err := <-ts.ended:
			t.Fatalf("watcher %v: a client sending pongs was cut: %v", watcher != nil, err)
		default:
		}
		live.Close()
		ended("the client went", nil)

		c := dialWS(t, ts.url)
		<-ts.reads
		echo(t, c, "bye")
		ended("the handler said stop", nil)

		c = dialWS(t, ts.url)
		<-ts.reads
		c.WriteMessage(websocket.TextMessage, []byte(strings.Repeat("x", 100)))
		ended("a message over the limit", ErrFrameTooLarge)

		dialWS(t, ts.url)
		<-ts.reads
		ended("a silent client", ErrSilent)

		dialWS(t, ts.url)
		r := <-ts.reads
		time.Sleep(50 * time.Millisecond) // parked, with a watcher
		r.Stop()
		select {
		case err := <-ts.ended:
			if err != nil {
				t.Errorf("watcher %v: Stop: ended with %v, want nil", watcher != nil, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("watcher %v: Stop: the reads did not end", watcher != nil)
		}
		select {
		case err := <-ts.ended:
			t.Errorf("watcher %v: reads ended twice: %v", watcher != nil, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestWSReadsHugeFrameRefused: a frame that declares more than the limit
// (2^63-1 bytes, or 65 over 126's and 127's length forms) ends the reads
// with ErrFrameTooLarge as its header arrives, without waiting for a
// payload that will never come (the silence, here long, would end them).
func TestWSReadsHugeFrameRefused(t *testing.T) {
	w, err := nbio.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	huge := []byte{0x81, 0x80 | 127, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 'x'}
	mid := []byte{0x81, 0x80 | 126, 0, 65, 1, 2, 3, 4}
	// A fragmented message: a small first frame, then a continuation
	// that declares 2^63-1.
	cont := append(append([]byte{0x01, 0x80 | 1, 1, 2, 3, 4, 'a' ^ 1}, 0x80, 0x80|127), huge[2:]...)
	for _, watcher := range []*nbio.Watcher{w, nil} {
		ts := startWSServer(t, watcher, time.Minute)
		for name, frame := range map[string][]byte{"2^63-1 bytes": huge, "65 bytes in the 16-bit form": mid, "a continuation of 2^63-1 bytes": cont} {
			c := dialWS(t, ts.url)
			r := <-ts.reads
			if _, err := c.UnderlyingConn().Write(frame); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-ts.ended:
				if !errors.Is(err, ErrFrameTooLarge) {
					t.Errorf("watcher %v: %s: ended with %v, want ErrFrameTooLarge", watcher != nil, name, err)
				}
			case <-time.After(30 * time.Second):
				r.Stop()
				t.Fatalf("watcher %v: %s: the reads waited for the payload", watcher != nil, name)
			}
		}
	}
}
