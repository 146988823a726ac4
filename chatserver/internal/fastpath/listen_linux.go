package fastpath

import (
	"errors"
	"net"
	"syscall"
)

// deferAccept makes the kernel hand over a connection only once its first
// bytes have arrived (TCP_DEFER_ACCEPT, as nginx's "listen ... deferred"),
// so that Listener finds a page request already there when it accepts
// and answers it without a goroutine (answerAtOnce). A client that sends
// nothing is accepted anyway after a few seconds.
func deferAccept(network, address string, c syscall.RawConn) error {
	c.Control(func(fd uintptr) {
		syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_DEFER_ACCEPT, 1)
	})
	return nil // an optimisation: a listener without it works the same
}

// readNow reads what c has received, without waiting: wouldBlock when
// nothing has arrived yet; an error when c is not a socket.
func readNow(c net.Conn, buf []byte) (n int, wouldBlock bool, err error) {
	return ioNow(c, func(fd int) (int, error) { return syscall.Read(fd, buf) })
}

// writeNow writes what c's socket buffer takes, without waiting.
func writeNow(c net.Conn, p []byte) (n int, wouldBlock bool, err error) {
	return ioNow(c, func(fd int) (int, error) { return syscall.Write(fd, p) })
}

// ioNow runs op once on c's socket (non-blocking, as Go keeps every
// socket). It goes through Control, which neither waits nor checks
// deadlines nor takes c's read lock: Listener's connection is its own.
func ioNow(c net.Conn, op func(fd int) (int, error)) (n int, wouldBlock bool, err error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, false, errors.ErrUnsupported
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, false, err
	}
	cerr := rc.Control(func(fd uintptr) {
		for {
			n, err = op(int(fd))
			if err != syscall.EINTR {
				return
			}
		}
	})
	if cerr != nil {
		return 0, false, cerr
	}
	if err == syscall.EAGAIN {
		return 0, true, nil
	}
	if err != nil {
		return 0, false, err
	}
	return n, false, nil
}
