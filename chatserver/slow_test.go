package chatserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/stream"
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

	// Now read what the stalled connection had buffered: it ends with the
	// reason, or with a reset (the server drops what its kernel buffers
	// held for a stalled client), which may take the buffered bytes too.
	stalled.SetReadDeadline(time.Now().Add(waitFor))
	br := bufio.NewReader(stalled)
	events := make(chan ev, total+10)
	comments := make(chan string, 100)
	resp, err := http.ReadResponse(br, nil)
	switch {
	case errors.Is(err, syscall.ECONNRESET):
	case err != nil:
		t.Fatal(err)
	default:
		readSSE(resp.Body, events, comments)
	}
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
	// Cut by the hub (its queue full), or by its writer (its small socket
	// buffer full for WriteTimeout) when a busy machine sends slower than
	// that: either way it ends, the others unslowed, and resumes below.
	cut := strings.Contains(logs.String(), "stream cut") && strings.Contains(logs.String(), "slow consumer")
	timedOut := strings.Contains(logs.String(), "nick=stalled transport=sse why=") && strings.Contains(logs.String(), "i/o timeout")
	if !cut && !timedOut {
		t.Errorf("the server did not log the stalled stream's end and its reason:\n%s", logs.String())
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

// TestStalledAmongMany: among 1,000 streams, half SSE and half WebSocket,
// one SSE and one WebSocket client read their welcome and then nothing.
// Messages to them alone fill their sockets; then broadcasts of 4 KB go
// out one at a time, each once every other stream received the one
// before, until the hub cut both stalled streams: every
// other stream receives every broadcast, once and in order, while the
// stalled ones still hold their unread bytes. Each stalled stream is cut as
// a slow consumer (its queue full while its writer waits on the full
// socket), the server logs the cut and its reason, and what the stalled
// client had received by then is in order, with no duplicate.
func TestStalledAmongMany(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 connections")
	}
	// Most of its time is the stalled streams' last write waiting for WriteTimeout:
	// it runs beside the NATS tests, which wait too.
	t.Parallel()
	limit := raiseFileLimit(t)
	n := min(1000, int(limit-300)/2)
	if n < 50 {
		t.Skipf("the limit of open files (%d) allows too few streams", limit)
	}
	const queue = 16
	var logs syncBuffer
	// WriteTimeout stays at its default (10 s): the broadcasts that fill a
	// stalled stream's queue once its socket is full must go out before its
	// write gives up, however busy the machine, or it ends on that write
	// instead of being cut as slow.
	ts := startServer(t, Options{MaxConnsPerAddr: -1, KeepAlive: time.Hour, QueueSize: queue, NoSync: true,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	addr := strings.TrimPrefix(ts.url, "http://")
	buf := make([]byte, 4096)

	small := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	stalledNicks := []string{"stalledsse", "stalledws"}
	var stalled []*rawStream
	for _, nick := range stalledNicks {
		s, err := dialRawWith(small, addr, strings.TrimPrefix(nick, "stalled"), nick, buf)
		if err != nil {
			t.Fatal(err)
		}
		defer s.c.Close()
		stalled = append(stalled, s)
	}
	others := make([]*rawStream, n-len(stalled))
	for i := range others {
		kind := "sse"
		if i%2 == 1 {
			kind = "ws"
		}
		s, err := dialRaw(addr, kind, fmt.Sprintf("other%04d", i), buf)
		if err != nil {
			t.Fatal(err)
		}
		defer s.c.Close()
		others[i] = s
	}

	// Each other stream has a reader of its own that counts the broadcasts
	// as they come and reports one out of order or twice.
	const maxRounds = 3000
	prefix := []byte("boss to all: r")
	var got [maxRounds]atomic.Int32
	errs := make(chan error, len(others))
	var ended atomic.Bool
	for i, s := range others {
		go func() {
			acc, next := s.tail, 0
			b := make([]byte, 32<<10)
			s.c.SetReadDeadline(time.Time{})
			for {
				for {
					j := bytes.Index(acc, prefix)
					if j < 0 || len(acc) < j+len(prefix)+5 {
						break
					}
					k, _ := strconv.Atoi(string(acc[j+len(prefix) : j+len(prefix)+5]))
					if k != next || k >= maxRounds {
						errs <- fmt.Errorf("other%04d: broadcast %d after %d", i, k, next-1)
						return
					}
					got[k].Add(1)
					next++
					acc = acc[j+len(prefix)+5:]
				}
				if len(acc) > len(prefix)+5 {
					acc = append(acc[:0], acc[len(acc)-len(prefix)-5:]...)
				}
				m, err := s.c.Read(b)
				if err != nil {
					if !ended.Load() {
						errs <- fmt.Errorf("other%04d: %w", i, err)
					}
					return
				}
				acc = append(acc, b[:m]...)
			}
		}()
	}
	defer ended.Store(true)

	// state reports, for each stalled stream, the reason the hub cut it
	// with ("" while open) and how many events wait in its queue.
	state := func() (reasons []string, queued []int) {
		reasons, queued = make([]string, len(stalledNicks)), make([]int, len(stalledNicks))
		ts.srv.localHub().do(t.Context(), &inspectReq{fn: func(h *hub) {
			for i, nick := range stalledNicks {
				if c := first(h.local.To(nick, "")); c != nil {
					reasons[i], queued[i] = c.CutReason(), c.Queued()
				} else {
					reasons[i] = "(gone)"
				}
			}
		}})
		return reasons, queued
	}
	text := strings.Repeat("x", 4000)
	// First the stalled streams alone are sent 4 KB messages until their
	// sockets are full: their writers wait, and half their queue waits.
	for sent := 0; ; sent++ {
		reasons, queued := state()
		if slices.ContainsFunc(reasons, func(r string) bool { return r != "" }) {
			t.Fatalf("a stalled stream was cut before the broadcasts (%q)", reasons)
		}
		if !slices.ContainsFunc(queued, func(q int) bool { return q < queue/2 }) {
			t.Logf("%d messages of 4 KB to the stalled streams filled their sockets: %v events queued", sent, queued)
			break
		}
		if sent == maxRounds {
			t.Fatalf("%d messages of 4 KB did not fill the stalled streams' sockets: %v events queued", sent, queued)
		}
		for i, nick := range stalledNicks {
			if queued[i] < queue/2 {
				if status, body := ts.post(t, "boss", nick, "fill "+text); status != 200 {
					t.Fatalf("message to %s: %d %s", nick, status, body)
				}
			}
		}
	}
	// Then broadcasts, one at a time, until the hub cut both.
	rounds := 0
	for ; ; rounds++ {
		if reasons, _ := state(); !slices.Contains(reasons, "") {
			break
		}
		if rounds == maxRounds {
			t.Fatalf("%d broadcasts of 4 KB went out and the stalled streams are not cut", maxRounds)
		}
		// Sent from a goroutine: a hub held up by the stalled streams
		// would hold the answer too, and the test would hang.
		posted := make(chan error, 1)
		go func() {
			b, _ := json.Marshal(map[string]string{"from": "boss", "to": "all", "text": fmt.Sprintf("r%05d %s", rounds, text)})
			resp, err := http.Post(ts.url+"/send", "application/json", bytes.NewReader(b))
			if err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					err = fmt.Errorf("%s %s", resp.Status, body)
				}
			}
			posted <- err
		}()
		// The mechanism is a delay: the others receive while the stalled
		// ones stall. Two minutes for 1,000 deliveries of 4 KB and an
		// answer is more than a busy machine takes.
		deadline := time.After(2 * time.Minute)
		for got[rounds].Load() < int32(len(others)) {
			select {
			case err := <-errs:
				t.Fatal(err)
			case <-deadline:
				t.Fatalf("%d of %d other streams received broadcast %d within 2 minutes while two streams stalled", got[rounds].Load(), len(others), rounds)
			case <-time.After(time.Millisecond):
			}
		}
		select {
		case err := <-posted:
			if err != nil {
				t.Fatalf("broadcast %d: %v", rounds, err)
			}
		case <-deadline:
			t.Fatalf("broadcast %d was received but not answered within 2 minutes", rounds)
		}
	}
	reasons, _ := state()
	t.Logf("N = %d streams (%d others, SSE and WebSocket, and %d stalled); the stalled were cut after %d broadcasts of 4 KB, which every other stream received once and in order: %q",
		n, len(others), len(stalled), rounds, reasons)
	for i, r := range reasons {
		if r != "(gone)" && r != fmt.Sprintf(stream.Slow, queue) {
			t.Errorf("%s was cut with %q, want the slow-consumer reason", stalledNicks[i], r)
		}
	}

	// Their writes give up (WriteTimeout) and they leave; the server logged
	// each cut with its reason.
	for i, nick := range stalledNicks {
		ts.waitStreams(t, nick, -1)
		var line string
		for l := range strings.SplitSeq(logs.String(), "\n") {
			if strings.Contains(l, "stream cut") && strings.Contains(l, "nick="+nick+" ") {
				line = l
			}
		}
		if !strings.Contains(line, "reason=\"slow consumer") {
			t.Errorf("the server's log of %s's cut: %q, want a stream cut line with the slow-consumer reason", nick, line)
		}
		// What the stalled client holds is the broadcasts in order, fewer
		// than went out.
		s := stalled[i]
		s.c.SetReadDeadline(time.Now().Add(waitFor))
		all, err := io.ReadAll(io.MultiReader(bytes.NewReader(s.tail), s.c))
		if err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("%s: reading what it holds: %v", nick, err)
		}
		next := 0
		for rest := all; ; {
			j := bytes.Index(rest, prefix)
			if j < 0 || len(rest) < j+len(prefix)+5 {
				break
			}
			k, _ := strconv.Atoi(string(rest[j+len(prefix) : j+len(prefix)+5]))
			if k != next {
				t.Errorf("%s held broadcast %d after %d", nick, k, next-1)
				break
			}
			next++
			rest = rest[j+len(prefix)+5:]
		}
		t.Logf("%s held %d broadcasts (%d bytes) when it was cut", nick, next, len(all))
		if next >= rounds {
			t.Errorf("%s received all %d broadcasts: it did not stall", nick, rounds)
		}
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

// first is the first stream seq yields, nil when none.
func first(seq iter.Seq[*stream.Conn]) *stream.Conn {
	for c := range seq {
		return c
	}
	return nil
}
