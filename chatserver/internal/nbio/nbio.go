// Package nbio reads and writes a Go socket once, without waiting: what
// the kernel has received, or what the socket's buffer takes, now. It is
// how the chat answers a request on the goroutine that accepted it
// (fastpath) and writes a broadcast from a few writer loops instead of a
// goroutine per stream (stream.Loops): both need to know "would block"
// rather than be parked by Go's netpoller. A Watcher tells, from one
// goroutine and one epoll set, when the clients of many idle connections
// go away, or (Readable) when an idle WebSocket's client sends: a stream's
// connection needs no goroutine parked in its read. An Acceptor accepts connections as bare Sockets, outside Go's
// netpoller, for requests answered with one read, one write and a close;
// Socket.Conn makes one a net.Conn when it must wait: it waits in Go's
// netpoller and reads and writes with raw system calls too.
//
// Go keeps every socket non-blocking; these calls go through the
// connection's syscall.RawConn. On systems other than Linux they return
// errors.ErrUnsupported, and their callers take the waiting path.
package nbio

import (
	"errors"
	"net"
	"syscall"
)

// Prefixed is a connection whose reads return first the bytes already
// taken from it (Pending), then what its socket receives: a connection
// handed on, to net/http or to gorilla/websocket, after some of it was
// read without waiting. Its SyscallConn is the socket's.
type Prefixed struct {
	net.Conn
	Pending []byte // owned by the connection's reader

	// Hold keeps the next Write's bytes in Held instead of sending them;
	// Held goes out in front of the Write after it, in the same write (a
	// WebSocket's handshake answer with the stream's first frames), or in
	// front of what a writer that takes it (TakeHeld) sends. Both are
	// owned by the connection's writer.
	Hold bool
	Held []byte
}

// Write writes p, after the bytes held (Hold) if any, in one write; it
// returns how many bytes of p were written.
func (c *Prefixed) Write(p []byte) (int, error) {
	if c.Hold {
		c.Hold = false
		c.Held = append(c.Held[:0:0], p...) // p is the caller's to reuse
		return len(p), nil
	}
	if len(c.Held) == 0 {
		return c.Conn.Write(p)
	}
	held := len(c.Held)
	b := append(c.TakeHeld(), p...)
	n, err := c.Conn.Write(b)
	if n < held {
		c.Held = b[n:held] // never sent: still in front of the next write
		return 0, err
	}
	return n - held, err
}

// TakeHeld returns the bytes held and forgets them: the caller sends them
// before anything else it writes.
func (c *Prefixed) TakeHeld() []byte {
	b := c.Held
	c.Held = nil
	return b
}

func (c *Prefixed) Read(p []byte) (int, error) {
	if len(c.Pending) > 0 {
		n := copy(p, c.Pending)
		c.Pending = c.Pending[n:]
		if len(c.Pending) == 0 {
			c.Pending = nil
		}
		return n, nil
	}
	return c.Conn.Read(p)
}

// SyscallConn gives the socket to those that read, write or watch it
// without waiting (a stream's writer loops, the Watcher).
func (c *Prefixed) SyscallConn() (syscall.RawConn, error) { return RawConn(c.Conn) }

// RawConn is c's syscall.RawConn: errors.ErrUnsupported when c is not a
// socket (a syscall.Conn). A wrapper of a connection gives its socket on
// with it.
func RawConn(c net.Conn) (syscall.RawConn, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return sc.SyscallConn()
}

// CloseWrite ends the connection's writes, as a TCP connection's does.
func (c *Prefixed) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}
