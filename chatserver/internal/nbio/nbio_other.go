//go:build !linux

package nbio

import (
	"errors"
	"net"
	"net/netip"
)

// ReadNow and WriteNow are Linux's (nbio_linux.go); elsewhere their callers
// take the waiting path.
func ReadNow(c net.Conn, buf []byte) (int, bool, error) { return 0, false, errors.ErrUnsupported }
func WriteNow(c net.Conn, p []byte) (int, bool, error)  { return 0, false, errors.ErrUnsupported }

// Raw is Linux's; elsewhere every Raw is the zero one.
type Raw struct{}

func NewRaw(net.Conn) Raw                      { return Raw{} }
func (Raw) ReadNow([]byte) (int, bool, error)  { return 0, false, errors.ErrUnsupported }
func (Raw) WriteNow([]byte) (int, bool, error) { return 0, false, errors.ErrUnsupported }

// Socket and Acceptor are Linux's (socket_linux.go); elsewhere
// NewAcceptor fails and its caller accepts with the listener's Accept.
type Socket struct{}

// Acceptor accepts a TCP listener's connections as Sockets.
type Acceptor struct{}

func NewAcceptor(ln net.Listener) (*Acceptor, error)        { return nil, errors.ErrUnsupported }
func (a *Acceptor) AcceptEach(accepted func(*Socket)) error { return errors.ErrUnsupported }
func (a *Acceptor) Close() error                            { return nil }
func (s *Socket) Peer() netip.AddrPort                      { return netip.AddrPort{} }
func (s *Socket) ReadNow([]byte) (int, bool, error)         { return 0, false, errors.ErrUnsupported }
func (s *Socket) WriteNow([]byte) (int, bool, error)        { return 0, false, errors.ErrUnsupported }
func (s *Socket) CloseWrite() error                         { return errors.ErrUnsupported }
func (s *Socket) Close() error                              { return errors.ErrUnsupported }
func (s *Socket) Conn() (net.Conn, error)                   { return nil, errors.ErrUnsupported }
