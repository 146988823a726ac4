// Package nbio reads and writes a Go socket once, without waiting: what
// the kernel has received, or what the socket's buffer takes, now. It is
// how the chat answers a request on the goroutine that accepted it
// (fastpath) and writes a broadcast from a few writer loops instead of a
// goroutine per stream (stream.Writers): both need to know "would block"
// rather than be parked by Go's netpoller. A Watcher tells, from one
// goroutine and one epoll set, when the clients of many idle connections
// go away, or (Readable) when an idle WebSocket's client sends: a stream's
// connection needs no goroutine parked in its read. An Acceptor accepts connections as bare Sockets, outside Go's
// netpoller, for requests answered with one read, one write and a close;
// Socket.Conn makes one a net.Conn when it must wait.
//
// Go keeps every socket non-blocking; these calls go through the
// connection's syscall.RawConn. On systems other than Linux they return
// errors.ErrUnsupported, and their callers take the waiting path.
package nbio
