package chatserver

import (
	"bytes"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/room"
)

// TestPresenceCoalesced: joins within one presence window are told together
// ("a, b and 3 others joined."), one alone as in the article, and waiting
// notices come before any later event.
func TestPresenceCoalesced(t *testing.T) {
	// A window of an hour: only a later event ends it, whatever the machine's speed.
	ts := startServer(t, Options{PresenceWindow: time.Hour})
	obs := ts.login(t, "sse", "obs")
	obs.expect("Welcome obs!", "now online: ")
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		c := ts.login(t, "ws", n)
		c.expect("Welcome " + n + "!")
	}
	obs.send("all", "hi")
	obs.expect("a, b and 3 others joined.", "obs to all: hi")

	// One join alone in its window reads as in the article.
	f := ts.login(t, "sse", "f")
	f.expect("Welcome f!", "now online: a, b, c, d, e, obs")
	obs.send("all", "hi f")
	obs.expect("f has joined.", "obs to all: hi f")

	// Leaves coalesce too; a join after them is told after them.
	f.close()
	ts.waitStreams(t, "f", -1)
	g := ts.login(t, "sse", "g")
	g.expect("Welcome g!")
	obs.send("all", "bye")
	obs.expect("f has left.", "g has joined.", "obs to all: bye")
}

// TestOnlineListCapped: a welcome names at most room.MaxOnlineShown users and
// says how many there are.
func TestOnlineListCapped(t *testing.T) {
	ts := startServer(t, Options{})
	const maxOnlineShown = room.MaxOnlineShown
	for i := range maxOnlineShown + 5 {
		ts.srv.localHub().do(t.Context(), &inspectReq{fn: func(h *hub) {
			h.reqSeq++
			h.m.Apply(room.Request{Kind: room.Open, Seq: h.reqSeq, At: h.now(), Nick: fmt.Sprintf("u%03d", i), Node: "elsewhere", Token: uint64(i)})
		}})
	}
	c := ts.login(t, "sse", "late")
	c.expect("Welcome late!")
	e := c.next()
	want := fmt.Sprintf(" and 5 others (%d users; a welcome names at most %d)", maxOnlineShown+5, maxOnlineShown)
	if !strings.HasPrefix(e.text, "now online: u") || !strings.HasSuffix(e.text, want) || strings.Count(e.text, ", ") != maxOnlineShown-1 {
		t.Fatalf("welcome list %q", e.text)
	}
}

// rawStream is a chat stream read at the byte level, with no goroutine and
// no buffer of its own while idle, so that the memory a test measures is
// the server's.
type rawStream struct {
	c    net.Conn
	tail []byte
}

// readUntil reads until want went by.
func (s *rawStream) readUntil(want string, buf []byte) error {
	s.c.SetReadDeadline(time.Now().Add(2 * time.Minute))
	acc := s.tail
	for !bytes.Contains(acc, []byte(want)) {
		n, err := s.c.Read(buf)
		if err != nil {
			return fmt.Errorf("reading for %q: %w (read %q)", want, err, acc)
		}
		acc = append(acc, buf[:n]...)
		if len(acc) > 64<<10 {
			acc = acc[len(acc)-len(want):]
		}
	}
	i := bytes.Index(acc, []byte(want)) + len(want)
	s.tail = append([]byte(nil), acc[i:]...)
	if len(s.tail) == 0 {
		s.tail = nil
	}
	return nil
}

// dialRaw logs nick in over SSE or WebSocket and reads to its welcome.
func dialRaw(addr, kind, nick string, buf []byte) (*rawStream, error) {
	return dialRawWith(&net.Dialer{}, addr, kind, nick, buf)
}

// dialRawWith is dialRaw through d.
func dialRawWith(d *net.Dialer, addr, kind, nick string, buf []byte) (*rawStream, error) {
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	var req string
	if kind == "sse" {
		req = "GET /" + nick + " HTTP/1.1\r\nHost: " + addr + "\r\nAccept: text/event-stream\r\n\r\n"
	} else {
		req = "GET /ws?nick=" + nick + " HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	}
	if _, err := c.Write([]byte(req)); err != nil {
		c.Close()
		return nil, err
	}
	s := &rawStream{c: c}
	// Server frames are unmasked: the JSON text is in the bytes as sent.
	if err := s.readUntil("Welcome "+nick+"!", buf); err != nil {
		c.Close()
		return nil, err
	}
	return s, nil
}

// raiseFileLimit sets the soft limit of open files to the hard one and returns it.
func raiseFileLimit(t testing.TB) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	return lim.Cur
}

// inUse is the memory the Go runtime holds for live objects and stacks.
func inUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// count reads until end went by and returns how many times want went by
// before it.
func (s *rawStream) count(want, end string, buf []byte) (int, error) {
	s.c.SetReadDeadline(time.Now().Add(2 * time.Minute))
	acc := s.tail
	for !bytes.Contains(acc, []byte(end)) {
		n, err := s.c.Read(buf)
		if err != nil {
			return 0, fmt.Errorf("reading for %q: %w (read %q)", end, err, acc)
		}
		acc = append(acc, buf[:n]...)
	}
	i := bytes.Index(acc, []byte(end))
	s.tail = nil
	if rest := acc[i+len(end):]; len(rest) > 0 {
		s.tail = append([]byte(nil), rest...)
	}
	return bytes.Count(acc[:i], []byte(want)), nil
}

// maxIdleStreamKB fails TestManyStreams: the memory an idle stream of
// either kind holds is about 8-10 KB (docs/VALIDATION.md, chat at scale).
const maxIdleStreamKB = 12

// TestManyStreams: up to 10,000 distinct users (as many as the limit of open
// files allows: both ends of each stream are in this process) log in, half
// over SSE, then half over WebSocket; the memory each idle stream of each
// kind holds is measured and bounded; then one broadcast reaches every one
// of them exactly once.
func TestManyStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("opens thousands of connections")
	}
	limit := raiseFileLimit(t)
	n := min(10000, int(limit-300)/2)
	if n < 100 {
		t.Skipf("the limit of open files (%d) allows too few streams", limit)
	}
	ts := startServer(t, Options{MaxConnsPerAddr: -1, KeepAlive: time.Hour})
	addr := strings.TrimPrefix(ts.url, "http://")
	streams := make([]*rawStream, n)
	t.Cleanup(func() {
		for _, s := range streams {
			if s != nil {
				s.c.Close()
			}
		}
	})
	nSSE := (n + 1) / 2 // streams[:nSSE] are SSE, the rest WebSocket

	var next atomic.Int64
	var failed atomic.Pointer[error]
	work := func(from, to int, f func(i int, buf []byte) error) {
		next.Store(int64(from))
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				buf := make([]byte, 4096)
				for {
					i := int(next.Add(1)) - 1
					if i >= to || failed.Load() != nil {
						return
					}
					if err := f(i, buf); err != nil {
						failed.CompareAndSwap(nil, &err)
						return
					}
				}
			})
		}
		wg.Wait()
		if p := failed.Load(); p != nil {
			t.Fatal(*p)
		}
	}
	// logIn logs streams[from:to] in over kind and returns the growth of
	// the memory in use, the streams idle.
	logIn := func(from, to int, kind string) (grew int64, took time.Duration) {
		base := inUse()
		start := time.Now()
		work(from, to, func(i int, buf []byte) (err error) {
			streams[i], err = dialRaw(addr, kind, fmt.Sprintf("user%05d", i), buf)
			return err
		})
		took = time.Since(start)
		ts.waitStreams(t, fmt.Sprintf("user%05d", to-1), 1)
		// Let the coalesced notices of the last window reach the streams.
		ts.srv.localHub().do(t.Context(), &presenceReq{})
		time.Sleep(200 * time.Millisecond)
		return int64(inUse()) - int64(base), took
	}
	// Warm up: the first streams allocate what every later one shares.
	inUse()
	sseGrew, sseTook := logIn(0, nSSE, "sse")
	wsGrew, wsTook := logIn(nSSE, n, "ws")
	perSSE := float64(sseGrew) / float64(nSSE) / 1024
	perWS := float64(wsGrew) / float64(n-nSSE) / 1024
	t.Logf("N = %d streams (%d SSE, %d WebSocket; open-file limit %d) logged in in %v and %v; memory in use (Go heap + stacks) grew %.1f MB: %.1f KB per idle SSE stream, %.1f KB per idle WebSocket, %.1f KB per stream, both ends (this process holds the clients too)",
		n, nSSE, n-nSSE, limit, sseTook.Round(time.Millisecond), wsTook.Round(time.Millisecond),
		float64(sseGrew+wsGrew)/1e6, perSSE, perWS, float64(sseGrew+wsGrew)/float64(n)/1024)
	for _, k := range []struct {
		kind string
		kb   float64
	}{{"SSE stream", perSSE}, {"WebSocket", perWS}} {
		if k.kb > maxIdleStreamKB {
			if raceDetector {
				t.Logf("%.1f KB of memory per idle %s under -race: the bound (%d KB) is a normal build's", k.kb, k.kind, maxIdleStreamKB)
				continue
			}
			t.Errorf("%.1f KB of memory per idle %s, want at most %d KB", k.kb, k.kind, maxIdleStreamKB)
		}
	}

	// One broadcast, then another: each stream gets the first exactly
	// once before the second.
	start := time.Now()
	for _, text := range []string{"to everyone", "the end"} {
		if status, body := ts.post(t, "boss", "all", text); status != 200 {
			t.Fatalf("broadcast: %d %s", status, body)
		}
	}
	var dups, missing atomic.Int64
	work(0, n, func(i int, buf []byte) error {
		k, err := streams[i].count("boss to all: to everyone", "boss to all: the end", buf)
		if k == 0 {
			missing.Add(1)
		}
		if k > 1 {
			dups.Add(1)
		}
		return err
	})
	t.Logf("the broadcast reached all %d streams in %v", n, time.Since(start).Round(time.Millisecond))
	if dups.Load() > 0 || missing.Load() > 0 {
		t.Errorf("of %d streams, %d got the broadcast more than once and %d never", n, dups.Load(), missing.Load())
	}
}
