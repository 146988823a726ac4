package stream

import (
	"bufio"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// loopHost is a Host with writer loops.
type loopHost struct {
	noHost
	w *Loops
}

func (h loopHost) Loops() *Loops { return h.w }

// tcpPair is a connected pair of loopback TCP connections.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

var loopTiming = Timing{WriteTimeout: 10 * time.Second, KeepAlive: time.Hour, MailAckDelay: time.Hour}

// readEvents reads n SSE events from r and returns their ids, in order.
func readEvents(t *testing.T, c net.Conn, r *bufio.Reader, n int) []string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var ids []string
	for len(ids) < n {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d of %d events: %v", len(ids), n, err)
		}
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			ids = append(ids, strings.TrimSpace(id))
		}
	}
	return ids
}

// TestWritersWriteEventsWithoutGoroutines: once a stream is logged in, its
// events are written by a writer loop while its socket takes them: pushing
// events to many streams starts no goroutine of theirs, and every client
// reads its events in order.
func TestWritersWriteEventsWithoutGoroutines(t *testing.T) {
	w := NewLoops(2)
	defer w.Close()
	const streams, events = 20, 50
	type client struct {
		conn *Conn
		live *Writer
		nc   net.Conn
		r    *bufio.Reader
	}
	var cs []client
	for i := range streams {
		sc, cc := tcpPair(t)
		c := NewConn(fmt.Sprintf("user%d", i), events+1)
		l := Start(c, Plan{}, NewRawSSE(sc), loopHost{w: w}, loopTiming, nil)
		cs = append(cs, client{c, l, cc, bufio.NewReader(cc)})
	}
	for _, c := range cs {
		waitUntil(t, "idle after the login", func() bool { return c.live.state.Load() == writerIdle })
	}
	before := writerGoroutines.Load()
	for id := 1; id <= events; id++ {
		ev := NewEvent(uint64(id), "hello")
		for _, c := range cs {
			c.conn.Push(ev)
		}
	}
	for i, c := range cs {
		ids := readEvents(t, c.nc, c.r, events)
		for j, id := range ids {
			if id != fmt.Sprint(j+1) {
				t.Fatalf("stream %d read ids %v, want 1 to %d in order", i, ids, events)
			}
		}
	}
	if started := writerGoroutines.Load() - before; started != 0 {
		t.Errorf("%d writer goroutines started for %d events on %d streams whose sockets take them: want none (written by the loops)", started, events, streams)
	}
	for _, c := range cs {
		c.live.Stop()
	}
}

// TestWritersStalledStream: a client that reads nothing fills its socket;
// its stream then goes on to a goroutine of its own, and the other stream
// on the same loop still gets each event without waiting for it. Once the
// stalled client reads, it gets every event, in order.
func TestWritersStalledStream(t *testing.T) {
	w := NewLoops(1) // one loop: both streams on it
	defer w.Close()
	const max = 100_000
	ss, sc := tcpPair(t)
	fs, fc := tcpPair(t)
	stalled := NewConn("stalled", max)
	fast := NewConn("fast", max)
	ls := Start(stalled, Plan{}, NewRawSSE(ss), loopHost{w: w}, loopTiming, nil)
	lf := Start(fast, Plan{}, NewRawSSE(fs), loopHost{w: w}, loopTiming, nil)
	for _, l := range []*Writer{ls, lf} {
		waitUntil(t, "idle after the login", func() bool { return l.state.Load() == writerIdle })
	}
	fr := bufio.NewReader(fc)
	before := writerGoroutines.Load()
	text := strings.Repeat("x", 1000)
	id := 0
	// send gives the next event to both streams; the fast stream's client
	// reads it before the next is sent.
	send := func(while string) {
		id++
		ev := NewEvent(uint64(id), text)
		stalled.Push(ev)
		fast.Push(ev)
		if got := readEvents(t, fc, fr, 1); got[0] != fmt.Sprint(id) {
			t.Fatalf("fast stream read id %s, want %d, %s", got[0], id, while)
		}
	}
	// Fill the stalled client's socket buffers.
	for writerGoroutines.Load() == before {
		if id == max/2 {
			t.Fatalf("%d events of 1 KB not read did not fill a socket", id)
		}
		send("while the other fills its socket")
	}
	// The stalled stream's writer waits on its socket; the loop does not.
	for range 20 {
		send("while the other stalls")
	}
	ids := readEvents(t, sc, bufio.NewReader(sc), id)
	for j, got := range ids {
		if got != fmt.Sprint(j+1) {
			t.Fatalf("stalled stream read id %s at %d: want every event in order", got, j)
		}
	}
	ls.Stop()
	lf.Stop()
}

// TestWritersClose: streams woken after their loops closed are written by
// goroutines of their own; Close leaves no loop behind.
func TestWritersClose(t *testing.T) {
	before := runtime.NumGoroutine()
	w := NewLoops(3)
	sc, cc := tcpPair(t)
	c := NewConn("john", 8)
	l := Start(c, Plan{}, NewRawSSE(sc), loopHost{w: w}, loopTiming, nil)
	waitUntil(t, "idle after the login", func() bool { return l.state.Load() == writerIdle })
	w.Close()
	c.Push(NewEvent(7, "after close"))
	if ids := readEvents(t, cc, bufio.NewReader(cc), 1); ids[0] != "7" {
		t.Fatalf("read id %s, want 7", ids[0])
	}
	l.Stop()
	cc.Close()
	sc.Close()
	waitUntil(t, "no goroutine left", func() bool { return runtime.NumGoroutine() <= before })
}

// TestPushHereWritesOnTheCaller: an event pushed with PushHere to a stream
// whose writer is idle is written before PushHere returns, by the caller:
// the loops here run no goroutine, so an event handed to them would wait.
// The client reads it; Push's events still go to the loops.
func TestPushHereWritesOnTheCaller(t *testing.T) {
	w := &Loops{} // no loop runs: what is handed to it stays queued
	sc, cc := tcpPair(t)
	c := NewConn("john", 4)
	l := Start(c, Plan{}, NewRawSSE(sc), loopHost{w: w}, loopTiming, nil)
	defer l.Stop()
	defer w.Close() // what was handed to the loops goes to a goroutine, so that Stop ends
	r := bufio.NewReader(cc)
	waitUntil(t, "idle after the login", func() bool { return l.state.Load() == writerIdle })
	before := writerGoroutines.Load()
	c.PushHere(NewEvent(7, "mary: hello"))
	if queued := c.Queued(); queued != 0 || l.state.Load() != writerIdle {
		t.Fatalf("after PushHere: %d events queued, writer state %d; want none, idle (written by the caller)", queued, l.state.Load())
	}
	if started := writerGoroutines.Load() - before; started != 0 {
		t.Errorf("PushHere started %d writer goroutines, want none", started)
	}
	if ids := readEvents(t, cc, r, 1); ids[0] != "7" {
		t.Errorf("the client read event %s, want 7", ids[0])
	}
	c.Push(NewEvent(8, "mary: again"))
	w.mu.Lock()
	handed := len(w.ready) - w.head
	w.mu.Unlock()
	if handed != 1 {
		t.Errorf("after Push: %d streams handed to the loops, want 1", handed)
	}
}
