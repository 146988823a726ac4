package nbio

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
)

// Socket is a connection as accepted, a descriptor outside Go's netpoller:
// a request answered with one read, one write and a close costs no more
// system calls than that (a net.Conn adds its registration with the
// netpoller, its removal, TCP_NODELAY and its local address). Conn makes
// it a net.Conn for whatever needs waiting. Its holder owns it: one
// goroutine at a time reads, writes and closes it.
type Socket struct {
	fd   int
	peer netip.AddrPort
}

// Acceptor accepts a TCP listener's connections as Sockets.
type Acceptor struct {
	ln     net.Listener
	f      *os.File // a duplicate of ln's descriptor, in Go's netpoller
	closed atomic.Bool
}

// NewAcceptor accepts from ln, which must be a TCP listener
// (errors.ErrUnsupported otherwise: the caller accepts with ln.Accept).
// Close the Acceptor, as well as ln, when done.
func NewAcceptor(ln net.Listener) (*Acceptor, error) {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	// A listener's own RawConn cannot wait (its Read is refused): a
	// duplicate of its descriptor, as a non-blocking os.File, can.
	f, err := tl.File()
	if err != nil {
		return nil, fmt.Errorf("accept from %s: %w", ln.Addr(), err)
	}
	return &Acceptor{ln: ln, f: f}, nil
}

// AcceptEach accepts connections and calls accepted with each, on the
// calling goroutine, until the Acceptor is closed (net.ErrClosed) or
// accepting fails (out of file descriptors, say: the caller waits and
// calls again). Between connections it waits in Go's netpoller.
func (a *Acceptor) AcceptEach(accepted func(*Socket)) error {
	rc, err := a.f.SyscallConn()
	if err != nil {
		return err
	}
	var failed error
	rerr := rc.Read(func(lfd uintptr) bool {
		for {
			fd, peer, err := accept4(int(lfd))
			switch err {
			case nil:
				accepted(&Socket{fd: fd, peer: peer})
			case syscall.EAGAIN:
				return false // wait for the next connection
			case syscall.EINTR, syscall.ECONNABORTED:
			default:
				failed = os.NewSyscallError("accept4", err)
				return true
			}
		}
	})
	if a.closed.Load() {
		return net.ErrClosed
	}
	if rerr != nil {
		return rerr
	}
	return &net.OpError{Op: "accept", Net: "tcp", Addr: a.ln.Addr(), Err: failed}
}

// Close ends AcceptEach. The listener stays open until it is closed too.
func (a *Acceptor) Close() error {
	a.closed.Store(true)
	return a.f.Close()
}

// Peer is the client's address and port.
func (s *Socket) Peer() netip.AddrPort { return s.peer }

// ReadNow reads what has arrived, without waiting: wouldBlock when nothing has.
func (s *Socket) ReadNow(buf []byte) (n int, wouldBlock bool, err error) {
	n, err = retry(func() (int, error) { return read(s.fd, buf) })
	return result(n, err, nil)
}

// WriteNow writes what the socket's buffer takes of p, without waiting:
// wouldBlock (and n == 0) when it takes nothing.
func (s *Socket) WriteNow(p []byte) (n int, wouldBlock bool, err error) {
	n, err = retry(func() (int, error) { return write(s.fd, p) })
	return result(n, err, nil)
}

// Close closes the socket.
func (s *Socket) Close() error { return closeFD(s.fd) }

// Conn makes s a net.Conn, in Go's netpoller, without TCP keep-alive (as
// the chat's listeners accept), and gives it its descriptor: s is not
// used again. On failure s is closed.
func (s *Socket) Conn() (net.Conn, error) {
	c, err := newConn(s)
	if err != nil {
		return nil, fmt.Errorf("connection from %s: %w", s.peer, err)
	}
	return c, nil
}

// CloseWrite ends the sending side: the client reads the end after what
// was written.
func (s *Socket) CloseWrite() error { return shutdownWrite(s.fd) }
