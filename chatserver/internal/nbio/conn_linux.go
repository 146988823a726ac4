package nbio

import (
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// conn is an accepted Socket as a net.Conn: its descriptor in Go's
// netpoller (an os.File, which waits and keeps the deadlines) and its
// reads, writes and options as raw system calls (rawcall_linux.go).
// net.FileConn's connection made ten calls through Go's syscall wrapper
// before a login's first byte (its duplicate's mode and type, TCP_NODELAY,
// keep-alive's options on and off, the original's close) and one for each
// write, each of which may wake the runtime's monitor thread; this one
// makes one, its close.
type conn struct {
	f      *os.File
	rc     syscall.RawConn
	local  net.Addr
	peer   net.Addr
	closed atomic.Bool
}

// newConn makes s a conn, with TCP_NODELAY as Go sets it on every TCP
// connection.
func newConn(s *Socket) (*conn, error) {
	if err := setsockoptInt(s.fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1); err != nil {
		closeFD(s.fd)
		return nil, os.NewSyscallError("setsockopt", err)
	}
	local, err := sockname(s.fd)
	if err != nil {
		closeFD(s.fd)
		return nil, os.NewSyscallError("getsockname", err)
	}
	f := os.NewFile(uintptr(s.fd), "tcp "+s.peer.String())
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &conn{f: f, rc: rc, local: net.TCPAddrFromAddrPort(local), peer: net.TCPAddrFromAddrPort(s.peer)}, nil
}

func (c *conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var err error
	werr := c.rc.Read(func(fd uintptr) bool {
		n, err = retry(func() (int, error) { return read(int(fd), p) })
		return err != syscall.EAGAIN
	})
	switch {
	case werr != nil:
		return 0, c.opError("read", werr)
	case err != nil:
		return 0, c.opError("read", os.NewSyscallError("read", err))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (c *conn) Write(p []byte) (int, error) {
	var n int
	var err error
	werr := c.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			m, e := retry(func() (int, error) { return write(int(fd), p[n:]) })
			if e == syscall.EAGAIN {
				return false
			}
			if e != nil {
				err = e
				return true
			}
			n += m
		}
		return true
	})
	switch {
	case werr != nil:
		return n, c.opError("write", werr)
	case err != nil:
		return n, c.opError("write", os.NewSyscallError("write", err))
	}
	return n, nil
}

// opError words err as net's connections do: net.ErrClosed once closed,
// os.ErrDeadlineExceeded (a timeout) past a deadline.
func (c *conn) opError(op string, err error) error {
	if c.closed.Load() {
		err = net.ErrClosed
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.peer, Err: err}
}

func (c *conn) Close() error {
	if c.closed.Swap(true) {
		return c.opError("close", net.ErrClosed)
	}
	if err := c.f.Close(); err != nil {
		return c.opError("close", err)
	}
	return nil
}

// CloseWrite ends the sending side, as a TCPConn's does.
func (c *conn) CloseWrite() error {
	var err error
	if cerr := c.rc.Control(func(fd uintptr) { err = shutdownWrite(int(fd)) }); cerr != nil {
		return c.opError("close", cerr)
	}
	if err != nil {
		return c.opError("close", os.NewSyscallError("shutdown", err))
	}
	return nil
}

func (c *conn) LocalAddr() net.Addr                   { return c.local }
func (c *conn) RemoteAddr() net.Addr                  { return c.peer }
func (c *conn) SetDeadline(t time.Time) error         { return c.f.SetDeadline(t) }
func (c *conn) SetReadDeadline(t time.Time) error     { return c.f.SetReadDeadline(t) }
func (c *conn) SetWriteDeadline(t time.Time) error    { return c.f.SetWriteDeadline(t) }
func (c *conn) SyscallConn() (syscall.RawConn, error) { return c.rc, nil }
