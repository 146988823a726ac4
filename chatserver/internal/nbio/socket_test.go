//go:build linux

package nbio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestAcceptor: connections come as Sockets with their client's address;
// a Socket reads and writes without waiting, becomes a net.Conn that
// carries on the same connection, and closes; AcceptEach waits in the
// netpoller between connections and returns net.ErrClosed once the
// Acceptor is closed.
func TestAcceptor(t *testing.T) {
	ln, a := newTestAcceptor(t)
	sockets := make(chan *Socket)
	ended := make(chan error, 1)
	go func() { ended <- a.AcceptEach(func(s *Socket) { sockets <- s }) }()
	next := func() *Socket {
		select {
		case s := <-sockets:
			return s
		case <-time.After(10 * time.Second):
			t.Fatal("no connection accepted")
			return nil
		}
	}
	for round := range 2 { // the second after AcceptEach waited for it
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		client.SetDeadline(time.Now().Add(10 * time.Second))
		s := next()
		if got, want := s.Peer().String(), client.LocalAddr().String(); got != want {
			t.Errorf("round %d: peer %s, want %s", round, got, want)
		}
		buf := make([]byte, 16)
		if n, wouldBlock, err := s.ReadNow(buf); n != 0 || !wouldBlock || err != nil {
			t.Fatalf("round %d: read of nothing sent: %d, %v, %v", round, n, wouldBlock, err)
		}
		client.Write([]byte("ping"))
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, wouldBlock, err := s.ReadNow(buf)
			if err != nil {
				t.Fatal(err)
			}
			if !wouldBlock {
				if string(buf[:n]) != "ping" {
					t.Fatalf("round %d: read %q", round, buf[:n])
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the client's bytes never arrived")
			}
			time.Sleep(time.Millisecond)
		}
		if n, _, err := s.WriteNow([]byte("pong")); n != 4 || err != nil {
			t.Fatalf("round %d: write: %d, %v", round, n, err)
		}
		if round == 0 {
			s.Close()
		} else {
			c, err := s.Conn()
			if err != nil {
				t.Fatal(err)
			}
			c.Write([]byte(" and more"))
			c.Close()
		}
		got, err := io.ReadAll(client)
		if want := map[int]string{0: "pong", 1: "pong and more"}[round]; string(got) != want || err != nil {
			t.Fatalf("round %d: the client read %q, %v; want %q and the end", round, got, err, want)
		}
	}
	a.Close()
	select {
	case err := <-ended:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("AcceptEach after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AcceptEach still waits after Close")
	}
}

// newTestAcceptor listens on loopback, and accepts from there; the
// listener closes with the test, the Acceptor is the caller's.
func newTestAcceptor(t *testing.T) (net.Listener, *Acceptor) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	a, err := NewAcceptor(ln)
	if err != nil {
		t.Fatal(err)
	}
	return ln, a
}

// TestSocketConn: a Socket made a net.Conn behaves as net's TCP
// connections do: its addresses, TCP_NODELAY on and keep-alive off, reads
// and writes that wait (a write larger than the socket's buffers ends
// once the client has read it), deadlines that time out, a Read that a
// Close ends with net.ErrClosed, CloseWrite, and io.EOF once the client
// has closed.
func TestSocketConn(t *testing.T) {
	ln, a := newTestAcceptor(t)
	defer a.Close()
	conns := make(chan net.Conn, 1)
	go a.AcceptEach(func(s *Socket) {
		c, err := s.Conn()
		if err != nil {
			t.Error(err)
		}
		conns <- c
	})
	dial := func() (client, c net.Conn) {
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Close() })
		client.SetDeadline(time.Now().Add(10 * time.Second))
		select {
		case c = <-conns:
		case <-time.After(10 * time.Second):
			t.Fatal("no connection accepted")
		}
		t.Cleanup(func() { c.Close() })
		return client, c
	}

	client, c := dial()
	if c.LocalAddr().String() != client.RemoteAddr().String() || c.RemoteAddr().String() != client.LocalAddr().String() {
		t.Errorf("addresses %s and %s, want %s and %s", c.LocalAddr(), c.RemoteAddr(), client.RemoteAddr(), client.LocalAddr())
	}
	rc, err := RawConn(c)
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) {
		if v, err := syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_NODELAY); v == 0 || err != nil {
			t.Errorf("TCP_NODELAY %d, %v; want it on", v, err)
		}
		if v, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE); v != 0 || err != nil {
			t.Errorf("SO_KEEPALIVE %d, %v; want it off", v, err)
		}
	})

	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<19) // 8 MiB
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(client, int64(len(big))))
		read <- b
	}()
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if n, err := c.Write(big); n != len(big) || err != nil {
		t.Fatalf("write of 8 MiB: %d, %v", n, err)
	}
	if got := <-read; !bytes.Equal(got, big) {
		t.Fatalf("the client read %d bytes, not the %d written", len(got), len(big))
	}

	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	var ne net.Error
	if _, err := c.Read(make([]byte, 8)); !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past its deadline: %v, want a timeout", err)
	}
	c.SetReadDeadline(time.Time{})
	client.Write([]byte("hello"))
	buf := make([]byte, 8)
	if n, err := c.Read(buf); string(buf[:n]) != "hello" || err != nil {
		t.Fatalf("read %q, %v", buf[:n], err)
	}

	if err := c.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(client); len(b) != 0 || err != nil {
		t.Fatalf("after CloseWrite the client read %q, %v; want the end", b, err)
	}
	client.Write([]byte("still"))
	if n, err := c.Read(buf); string(buf[:n]) != "still" || err != nil {
		t.Fatalf("read after CloseWrite: %q, %v", buf[:n], err)
	}
	client.Close()
	if n, err := c.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("read once the client closed: %d, %v; want io.EOF", n, err)
	}

	_, c = dial()
	ended := make(chan error)
	go func() {
		_, err := c.Read(buf)
		ended <- err
	}()
	time.Sleep(20 * time.Millisecond) // the Read waits in the netpoller
	c.Close()
	select {
	case err := <-ended:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("read ended by Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the Read")
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("write after Close: %v, want net.ErrClosed", err)
	}
	if err := c.Close(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("second Close: %v, want net.ErrClosed", err)
	}
}
