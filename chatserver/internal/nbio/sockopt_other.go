//go:build !unix

package nbio

import (
	"errors"
	"net"
)

// SetSendBuffer is unsupported here.
func SetSendBuffer(net.Conn, int) error { return errors.ErrUnsupported }

// ResetOnClose is unsupported here.
func ResetOnClose(net.Conn) error { return errors.ErrUnsupported }
