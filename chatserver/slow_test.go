package chatserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSlowConsumer holds one SSE consumer that never reads while three
// others (SSE and WebSocket) receive 10,000 messages. The others get them
// all while the stalled one is still stalled; the stalled one is cut, and
// resuming from the last id it read gives it every message, once.
func TestSlowConsumer(t *testing.T) {
	const total = 10000
	var logs syncBuffer
	// A queue of 1,024 events: the stalled consumer overflows it whatever
	// the machine's speed (10 MB against its socket buffers and the queue),
	// while a reader that a busy machine leaves behind for a while is not
	// cut with it (a queue of 64 cut them when the suite ran busy).
	ts := startServer(t, Options{QueueSize: 1024, WriteTimeout: time.Second, LeaveGrace: time.Minute,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	// The stalled consumer: a raw connection with a tiny receive buffer
	// that sends its request and then reads nothing.
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	stalled, err := d.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	fmt.Fprintf(stalled, "GET /stalled HTTP/1.1\r\nHost: chat\r\nAccept: text/event-stream\r\n\r\n")
	ts.waitStreams(t, "stalled", 1)

	others := []*client{ts.login(t, "sse", "r1"), ts.login(t, "ws", "r2"), ts.login(t, "sse", "r3")}
	for _, c := range others {
		c.next()
		c.next() // welcome lines
	}

	// Send 10,000 broadcasts from 16 senders, keep-alive connections.
	text := strings.Repeat("x", 1000) // 10 MB in all: more than any socket buffers hold
	var wg sync.WaitGroup
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < total; i += 16 {
				body, _ := json.Marshal(map[string]string{"from": "sender", "to": "all", "text": fmt.Sprintf("%05d %s", i, text)})
				resp, err := hc.Post(ts.url+"/send", "application/json", bytes.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("send %d: %s", i, resp.Status)
					return
				}
			}
		})
	}
	// The others receive every message while the stalled one still stalls.
	for _, c := range others {
		seen := map[string]bool{}
		for len(seen) < total {
			e := c.next()
			if strings.HasPrefix(e.text, "sender to all: ") {
				if seen[e.text] {
					t.Fatalf("%s: %q twice", c.nick, e.text[:20])
				}
				seen[e.text] = true
			}
		}
	}
	wg.Wait()
	// Cut by the hub when its queue overflowed; its leave comes once its
	// writer gave up on the stalled socket (WriteTimeout).
	ts.waitStreams(t, "stalled", 0)

	// Now read what the stalled connection had buffered: it ends with the reason.
	stalled.SetReadDeadline(time.Now().Add(waitFor))
	br := bufio.NewReader(stalled)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan ev, total+10)
	comments := make(chan string, 100)
	readSSE(resp.Body, events, comments)
	close(events)
	got := map[string]bool{}
	var last uint64
	for e := range events {
		last = e.id
		if strings.HasPrefix(e.text, "sender to all: ") {
			got[e.text] = true
		}
	}
	var reason string
	for len(comments) > 0 {
		if c := <-comments; strings.HasPrefix(c, "closed: ") {
			reason = c
		}
	}
	// The reason reaches the client when its buffers have room for it; a
	// client that never reads gets it only in the server's log.
	if reason != "" && !strings.Contains(reason, "slow consumer") {
		t.Errorf("the cut stream's last comment = %q, want the slow-consumer reason", reason)
	}
	if !strings.Contains(logs.String(), "stream cut") || !strings.Contains(logs.String(), "slow consumer") {
		t.Errorf("the server did not log the cut and its reason:\n%s", logs.String())
	}
	t.Logf("stalled consumer read %d messages before the cut at id %d (%s)", len(got), last, reason)
	if len(got) == total {
		t.Fatal("the stalled consumer got everything before the cut: the test did not stall it")
	}

	again := ts.resume(t, "sse", "stalled", strconv.FormatUint(last, 10))
	again.lastID = last
	for len(got) < total {
		e := again.next()
		if !strings.HasPrefix(e.text, "sender to all: ") {
			continue
		}
		if got[e.text] {
			t.Fatalf("%q twice after resume", e.text[:20])
		}
		got[e.text] = true
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers (a log's output).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
