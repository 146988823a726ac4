package nbio

import (
	"errors"
	"net"
	"syscall"
)

// ReadNow reads what c has received, without waiting: wouldBlock when
// nothing has arrived yet; errors.ErrUnsupported when c is not a socket.
// It goes through Control, which neither waits nor checks deadlines nor
// takes c's read lock: the caller must own c's reads.
func ReadNow(c net.Conn, buf []byte) (n int, wouldBlock bool, err error) {
	return NewRaw(c).ReadNow(buf)
}

// WriteNow writes what c's socket buffer takes of p, without waiting:
// wouldBlock (and n == 0) when it takes nothing. Like ReadNow it neither
// waits nor checks deadlines nor takes c's write lock: the caller must own
// c's writes (no Write of c's runs at the same time).
func WriteNow(c net.Conn, p []byte) (n int, wouldBlock bool, err error) {
	return NewRaw(c).WriteNow(p)
}

// Raw is a connection's descriptor as ReadNow and WriteNow reach it (its
// syscall.RawConn), looked up once: a connection wrapped in others makes
// each lookup a call through every layer, and an allocation, which a
// broadcast would pay once per stream. The zero Raw is no socket: its
// calls return errors.ErrUnsupported.
type Raw struct{ rc syscall.RawConn }

// NewRaw returns c's Raw; the zero Raw when c is not a socket.
func NewRaw(c net.Conn) Raw {
	rc, _ := RawConn(c)
	return Raw{rc}
}

// ReadNow is ReadNow of the connection.
func (r Raw) ReadNow(buf []byte) (n int, wouldBlock bool, err error) {
	return r.once(func(fd int) (int, error) { return read(fd, buf) })
}

// WriteNow is WriteNow of the connection.
func (r Raw) WriteNow(p []byte) (n int, wouldBlock bool, err error) {
	return r.once(func(fd int) (int, error) { return write(fd, p) })
}

// once runs op on the descriptor through Control, again after EINTR.
func (r Raw) once(op func(fd int) (int, error)) (n int, wouldBlock bool, err error) {
	if r.rc == nil {
		return 0, false, errors.ErrUnsupported
	}
	cerr := r.rc.Control(func(fd uintptr) { n, err = retry(func() (int, error) { return op(int(fd)) }) })
	return result(n, err, cerr)
}

func retry(op func() (int, error)) (int, error) {
	for {
		n, err := op()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

func result(n int, err, rawErr error) (int, bool, error) {
	switch {
	case rawErr != nil:
		return 0, false, rawErr
	case err == syscall.EAGAIN:
		return 0, true, nil
	case err != nil:
		return 0, false, err
	}
	return n, false, nil
}
