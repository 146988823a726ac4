//go:build !linux

package nbio

import (
	"errors"
	"net"
)

// ReadNow and WriteNow are Linux's (nbio_linux.go); elsewhere their callers
// take the waiting path.
func ReadNow(c net.Conn, buf []byte) (int, bool, error) { return 0, false, errors.ErrUnsupported }
func WriteNow(c net.Conn, p []byte) (int, bool, error)  { return 0, false, errors.ErrUnsupported }
