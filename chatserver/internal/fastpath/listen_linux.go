package fastpath

import "syscall"

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
