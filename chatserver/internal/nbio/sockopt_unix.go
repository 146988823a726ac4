//go:build unix

package nbio

import (
	"net"
	"syscall"
)

// SetSendBuffer sets the kernel's send buffer of c's socket to bytes
// (SO_SNDBUF, which also ends its autotuning; Linux doubles it, for its
// bookkeeping).
func SetSendBuffer(c net.Conn, bytes int) error {
	rc, err := RawConn(c)
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = setsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, bytes)
	}); err != nil {
		return err
	}
	return serr
}

// ResetOnClose makes the close of c's socket a reset (SO_LINGER 0): what
// its kernel buffers still hold for the peer is dropped at once, instead
// of waiting there, for a peer that reads nothing, until TCP gives up.
func ResetOnClose(c net.Conn) error {
	rc, err := RawConn(c)
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = setLinger(int(fd), syscall.Linger{Onoff: 1, Linger: 0})
	}); err != nil {
		return err
	}
	return serr
}
