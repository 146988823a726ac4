//go:build !linux

package fastpath

import (
	"errors"
	"net"
	"syscall"
)

// deferAccept is Linux's TCP_DEFER_ACCEPT (listen_linux.go); elsewhere none.
func deferAccept(network, address string, c syscall.RawConn) error { return nil }

// readNow and writeNow do nothing here: Listener serves every
// connection on a goroutine of its own.
func readNow(c net.Conn, buf []byte) (int, bool, error) { return 0, false, errors.ErrUnsupported }
func writeNow(c net.Conn, p []byte) (int, bool, error)  { return 0, false, errors.ErrUnsupported }
