package nbio

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// pair is a connected pair of loopback TCP connections.
func pair(tb testing.TB) (server, client net.Conn) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	if client, err = net.Dial("tcp", ln.Addr().String()); err != nil {
		tb.Fatal(err)
	}
	if server, err = ln.Accept(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// TestWriteNowFillsThenWouldBlock: WriteNow writes what the socket takes
// and then says it would block, never waiting; ReadNow reads what came and
// then says it would block.
func TestWriteNowFillsThenWouldBlock(t *testing.T) {
	s, c := pair(t)
	chunk := make([]byte, 64<<10)
	total := 0
	for i := 0; ; i++ {
		if i == 10_000 {
			t.Fatalf("%d bytes written to a client that reads nothing, and no 'would block'", total)
		}
		n, wouldBlock, err := WriteNow(s, chunk)
		if err != nil {
			t.Fatal(err)
		}
		total += n
		if wouldBlock {
			if n != 0 {
				t.Fatalf("would block after writing %d bytes: want 0", n)
			}
			break
		}
	}
	got, err := io.ReadFull(c, make([]byte, total))
	if err != nil || got != total {
		t.Fatalf("client read %d of %d bytes: %v", got, total, err)
	}
	buf := make([]byte, 16)
	if n, wouldBlock, err := ReadNow(c, buf); n != 0 || !wouldBlock || err != nil {
		t.Fatalf("ReadNow with nothing sent = %d, %v, %v; want 0, true, nil", n, wouldBlock, err)
	}
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	// On loopback the bytes are in s's socket once Write returned.
	if n, wouldBlock, err := ReadNow(s, buf); string(buf[:n]) != "hello" || wouldBlock || err != nil {
		t.Fatalf("ReadNow = %q, %v, %v; want hello", buf[:n], wouldBlock, err)
	}
}

// TestNotASocket: a connection without a socket is refused with
// errors.ErrUnsupported, for its caller to take the waiting path.
func TestNotASocket(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, _, err := WriteNow(a, []byte("x")); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("WriteNow on a pipe: %v, want errors.ErrUnsupported", err)
	}
	if _, _, err := ReadNow(a, make([]byte, 1)); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("ReadNow on a pipe: %v, want errors.ErrUnsupported", err)
	}
}

// BenchmarkWriteNowEvent is the floor under a broadcast: one event of 64
// bytes written to each of 1,000 loopback sockets in turn, their clients
// reading. On loopback a write also runs the receiving socket's TCP input
// and wakes its reader, in the writer's time: ns/op is the CPU one
// delivery costs the server before any of the chat's own work.
func BenchmarkWriteNowEvent(b *testing.B) {
	const sockets = 1000
	var servers []net.Conn
	for range sockets {
		s, c := pair(b)
		servers = append(servers, s)
		go io.Copy(io.Discard, c)
	}
	event := []byte("id: 1234567\ndata: mary: hello everyone, this is one broadcast!\n\n") // 64 bytes
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, wouldBlock, err := WriteNow(servers[i%sockets], event); err != nil || wouldBlock {
			b.Fatalf("write %d: would block %v, %v", i, wouldBlock, err)
		}
	}
}

// waitFor waits for ch; the bound only keeps a broken watcher from hanging the test.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not within 10 s", what)
	}
}

// TestWatcher: a watched connection's client going (its end closed) is
// told once; what a client sends is read and dropped and tells nothing; a
// stopped watch tells nothing more; a connection that is not a socket is
// refused with errors.ErrUnsupported, as is every connection of a nil or
// closed Watcher; the watches left at Close are told gone.
func TestWatcher(t *testing.T) {
	w, err := NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	s1, c1 := pair(t)
	gone1 := make(chan struct{})
	if _, err := w.Watch(s1, func() { close(gone1) }); err != nil {
		t.Fatal(err)
	}
	s2, c2 := pair(t)
	var told2 atomic.Int32
	watch2, err := w.Watch(s2, func() { told2.Add(1) })
	if err != nil {
		t.Fatal(err)
	}

	// A client that sends: its bytes are dropped, and it has not gone.
	if _, err := c1.Write(make([]byte, 10_000)); err != nil {
		t.Fatal(err)
	}
	waitUntilEmpty := time.Now().Add(10 * time.Second)
	for {
		if n, wouldBlock, err := ReadNow(s1, make([]byte, 1)); wouldBlock && n == 0 && err == nil {
			break // read by the watcher
		}
		if time.Now().After(waitUntilEmpty) {
			t.Fatal("the client's bytes were not read within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case <-gone1:
		t.Fatal("told gone while the client is there")
	default:
	}
	c1.Close()
	waitFor(t, gone1, "the first client's going")

	// Stopped, then gone: nothing is told.
	if !watch2.Stop() {
		t.Error("Stop of a watch not yet told = false, want true")
	}
	c2.Close()
	s2.Close()
	time.Sleep(50 * time.Millisecond) // room for a wrong call, which nothing else would show
	if n := told2.Load(); n != 0 {
		t.Errorf("a stopped watch was told %d times", n)
	}

	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, err := w.Watch(a, func() {}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Watch of a pipe: %v, want errors.ErrUnsupported", err)
	}
	var none *Watcher
	if _, err := none.Watch(s1, func() {}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Watch of a nil Watcher: %v, want errors.ErrUnsupported", err)
	}
	// A watch left at Close is told gone: nobody would see its client go.
	s4, _ := pair(t)
	gone4 := make(chan struct{})
	if _, err := w.Watch(s4, func() { close(gone4) }); err != nil {
		t.Fatal(err)
	}
	w.Close()
	waitFor(t, gone4, "a watch left at Close")
	s3, _ := pair(t)
	if _, err := w.Watch(s3, func() {}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Watch after Close: %v, want errors.ErrUnsupported", err)
	}
}

// TestReadable: a Readable watch tells once that bytes arrived and leaves
// them unread; watched again, a connection with bytes still unread is told
// at once (level-triggered); a client that goes is told too.
func TestReadable(t *testing.T) {
	w, err := NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s, c := pair(t)
	var told atomic.Int32
	ready := make(chan struct{}, 4)
	tell := func() { told.Add(1); ready <- struct{}{} }
	if _, err := w.Readable(s, tell); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ready, "the bytes' arrival")
	buf := make([]byte, 16)
	if n, _, err := ReadNow(s, buf[:2]); err != nil || string(buf[:n]) != "pi" {
		t.Fatalf("ReadNow after the watch: %q, %v; want the client's bytes, unread by the watcher", buf[:n], err)
	}
	if _, err := w.Readable(s, tell); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ready, "the bytes left unread")
	if n, _, err := ReadNow(s, buf); err != nil || string(buf[:n]) != "ng" {
		t.Fatalf("ReadNow: %q, %v; want the rest", buf[:n], err)
	}
	watch, err := w.Readable(s, tell)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // room for a wrong call, which nothing else would show
	if n := told.Load(); n != 2 {
		t.Fatalf("told %d times with nothing to read, want 2", n)
	}
	c.Close()
	waitFor(t, ready, "the client's going")
	if watch.Stop() {
		t.Error("Stop after the watch was told = true, want false: a Readable watch ends at its first event")
	}
}
