//go:build linux

package nbio

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestAcceptor: connections come as Sockets with their client's address;
// a Socket reads and writes without waiting, becomes a net.Conn that
// carries on the same connection, and closes; AcceptEach waits in the
// netpoller between connections and returns net.ErrClosed once the
// Acceptor is closed.
func TestAcceptor(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a, err := NewAcceptor(ln)
	if err != nil {
		t.Fatal(err)
	}
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
