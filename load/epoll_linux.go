package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/wasmgap/wasmgap/internal/epoll"
)

// The event-loop client (ClientEpoll) is wrk's design: one loop per core, each owning its
// share of the connections in one epoll set, sending the next request from the same thread
// that read the answer. A goroutine per connection (ClientRaw) parks on every read and is
// woken through Go's netpoller, often on another thread; with few connections and a slow
// server those wake-ups cost more CPU per request than the request itself.
//
// Per request a loop makes one write and (for an answer that fits its buffer) one read, with no
// epoll_ctl: every connection stays registered for input, level-triggered, and output is
// watched only while a request could not be written whole. epoll_wait is amortized over the
// events it returns. Each loop owns its Metrics shard, so recording takes no lock.
//
// Two things about Go's scheduler matter as much as the syscalls (profiles of a run against
// the chat page: a third of the client's CPU went to context switches, half of them the
// runtime's own monitor thread, sysmon):
//   - A loop blocked in epoll_wait holds a processor (P) in a syscall. When no P is idle,
//     sysmon takes such a P back after 20 µs and resets its own wake-up period to 20 µs:
//     50,000 wake-ups per second. So the default is one loop fewer than GOMAXPROCS.
//   - A goroutine that runs 10 ms without passing through the scheduler (raw syscalls do not)
//     is preempted by a signal, and a preempted syscall has its P taken, with the same reset.
//     So each loop yields (runtime.Gosched) every yieldEvery.

const epollSupported = true

// evConn is one connection of an event loop.
type evConn struct {
	fd         int
	connecting bool
	used       bool // carried at least one complete answer: a close before the next is stale
	wrote      int  // bytes of the request written
	got        int64
	start      time.Time
	deadline   time.Time
	measured   bool
	active     bool // a request is in flight
	parser     respParser
}

type evLoop struct {
	ctx    context.Context
	r      *httpRun
	set    *epoll.Set
	sa     syscall.Sockaddr
	family int
	conns  []*evConn // by file descriptor
	nconns int
	sh     *shard
	buf    []byte
	events []epoll.Event
	open   int // connections this loop opens
}

// runEpoll runs the closed model on event loops; it returns when every loop is done.
func (r *httpRun) runEpoll(ctx context.Context) error {
	u, err := url.Parse(r.o.Request.URL)
	if err != nil {
		return err
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	addr, err := net.ResolveTCPAddr("tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return fmt.Errorf("resolve %s: %w", u.Host, err)
	}
	// Each loop gets its own Sockaddr: syscall.Connect writes its raw form into it.
	family := syscall.AF_INET
	if addr.IP.To4() == nil {
		family = syscall.AF_INET6
	}
	sockaddr := func() syscall.Sockaddr {
		if ip4 := addr.IP.To4(); ip4 != nil {
			s := &syscall.SockaddrInet4{Port: addr.Port}
			copy(s.Addr[:], ip4)
			return s
		}
		s := &syscall.SockaddrInet6{Port: addr.Port}
		copy(s.Addr[:], addr.IP.To16())
		return s
	}
	req := serializeRequest(&r.o.Request, u, r.o.HTTP10, !r.o.NoKeepAlive)
	nloops := r.o.loops()
	var wg sync.WaitGroup
	errc := make(chan error, nloops)
	for i := range nloops {
		conns := r.o.Connections / nloops
		if i < r.o.Connections%nloops {
			conns++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			l := &evLoop{ctx: ctx, r: r, sa: sockaddr(), family: family, sh: &r.shards[i%len(r.shards)],
				buf: make([]byte, 64<<10), events: make([]epoll.Event, 256), open: conns}
			if err := l.run(ctx, req); err != nil {
				errc <- err
			}
		}()
	}
	wg.Wait()
	close(errc)
	return <-errc
}

func (l *evLoop) run(ctx context.Context, req []byte) error {
	set, err := epoll.New()
	if err != nil {
		return err
	}
	l.set = set
	defer set.Close()
	defer func() {
		for _, c := range l.conns {
			if c != nil {
				syscall.Close(c.fd)
			}
		}
	}()
	for range l.open {
		l.next(nil, req, time.Now())
	}
	timeout := l.r.o.timeout()
	now := time.Now()
	nextCheck, nextYield := now.Add(checkEvery), now.Add(yieldEvery)
	for l.nconns > 0 {
		if ctx.Err() != nil {
			return nil
		}
		// Through the scheduler (not a raw syscall): a loop that waits gives its processor
		// to other goroutines, such as a server in the same process.
		n, err := set.Wait(l.events, checkEvery)
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			ev := &l.events[i]
			if c := l.conn(int(epoll.Token(ev))); c != nil {
				l.handle(c, ev.Events, req)
			}
		}
		now := time.Now()
		if now.After(nextYield) {
			nextYield = now.Add(yieldEvery)
			runtime.Gosched()
		}
		if now.After(nextCheck) {
			nextCheck = now.Add(checkEvery)
			for _, c := range l.conns {
				if c != nil && c.active && now.After(c.deadline) {
					l.finish(c, 0, fmt.Errorf("read answer: %w (after %s)", errEpollTimeout, timeout), req)
				}
			}
		}
	}
	return nil
}

const (
	// checkEvery is how often a loop looks for requests past their timeout and for the end
	// of the run, when no event wakes it sooner.
	checkEvery = 50 * time.Millisecond
	// yieldEvery is how often a busy loop passes through the scheduler: well under the 10 ms
	// after which the runtime preempts a goroutine with a signal.
	yieldEvery = 2 * time.Millisecond
)

// conn is the connection on fd, or nil.
func (l *evLoop) conn(fd int) *evConn {
	if fd < 0 || fd >= len(l.conns) {
		return nil
	}
	return l.conns[fd]
}

// errEpollTimeout is a request that outlived Options.Timeout.
var errEpollTimeout = timeoutError{}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// next starts the next request on c (nil: on a new connection), or closes c when the run's
// bound is reached. A failed connection counts as the request's error and the next request
// tries again, until the bound.
//
// now is the current time, which the caller has just read.
func (l *evLoop) next(c *evConn, req []byte, now time.Time) {
	r := l.r
	for retry := false; ; retry = true {
		if l.ctx.Err() != nil {
			l.drop(c)
			return
		}
		if retry {
			now = time.Now()
		}
		measured := !now.Before(r.measureFrom)
		if measured {
			if !r.until.IsZero() && !now.Before(r.until) {
				l.drop(c)
				return
			}
			if r.o.Requests > 0 && r.seq.Add(1) > int64(r.o.Requests) {
				l.drop(c)
				return
			}
			if !r.measuring.Load() {
				r.measuring.Store(true)
			}
		}
		if c == nil {
			var err error
			if c, err = l.dial(); err != nil {
				l.record(now, time.Now(), 0, 0, &connectError{err}, measured)
				c = nil
				continue
			}
		}
		c.start, c.deadline, c.measured, c.active = now, now.Add(r.o.timeout()), measured, true
		c.wrote, c.got = 0, 0
		c.parser.reset()
		c.parser.head = r.o.Request.method() == "HEAD"
		if !c.connecting {
			l.write(c, req)
		}
		return
	}
}

func (l *evLoop) dial() (*evConn, error) {
	fd, err := syscall.Socket(l.family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	c := &evConn{fd: fd}
	if err := syscall.Connect(fd, l.sa); err != nil {
		if err != syscall.EINPROGRESS {
			syscall.Close(fd)
			return nil, fmt.Errorf("connect: %w", err)
		}
		c.connecting = true
	}
	events := uint32(epoll.In | epoll.RDHup)
	if c.connecting {
		events |= epoll.Out
	}
	if err := l.set.Add(fd, events, uint64(fd)); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	if fd >= len(l.conns) {
		l.conns = append(l.conns, make([]*evConn, fd+1-len(l.conns))...)
	}
	l.conns[fd] = c
	l.nconns++
	return c, nil
}

func (l *evLoop) drop(c *evConn) {
	if c == nil {
		return
	}
	if l.conns[c.fd] == c {
		l.conns[c.fd] = nil
		l.nconns--
	}
	syscall.Close(c.fd)
}

func (l *evLoop) write(c *evConn, req []byte) {
	for c.wrote < len(req) {
		n, err := rawWrite(c.fd, req[c.wrote:])
		if err == syscall.EAGAIN {
			l.watchWrite(c, true)
			return
		}
		if err != nil {
			l.finish(c, 0, fmt.Errorf("write request: %w", err), req)
			return
		}
		c.wrote += n
	}
}

func (l *evLoop) watchWrite(c *evConn, on bool) {
	events := uint32(epoll.In | epoll.RDHup)
	if on {
		events |= epoll.Out
	}
	l.set.Modify(c.fd, events, uint64(c.fd))
}

func (l *evLoop) handle(c *evConn, events uint32, req []byte) {
	if c.connecting {
		if events&(epoll.Out|epoll.Err|epoll.Hup) == 0 {
			return
		}
		if v, err := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR); err != nil || v != 0 {
			if err == nil {
				err = syscall.Errno(v)
			}
			l.finish(c, 0, &connectError{err}, req)
			return
		}
		c.connecting = false
		l.watchWrite(c, false)
		l.write(c, req)
		return
	}
	if events&epoll.Out != 0 && c.wrote < len(req) {
		l.watchWrite(c, false)
		l.write(c, req)
		if c.wrote < len(req) {
			return
		}
	}
	if events&(epoll.In|epoll.Err|epoll.Hup|epoll.RDHup) == 0 {
		return
	}
	n, err := rawRead(c.fd, l.buf)
	switch {
	case err == syscall.EAGAIN:
		return
	case err != nil:
		l.finish(c, 0, fmt.Errorf("read answer: %w", err), req)
		return
	case n == 0:
		if c.parser.eof() {
			l.finish(c, c.parser.status, nil, req)
			return
		}
		if !c.active {
			l.drop(c)
			return
		}
		l.finish(c, 0, fmt.Errorf("read answer: %w", errUnexpectedClose), req)
		return
	}
	if !c.active {
		return // bytes nobody asked for
	}
	used, done, perr := c.parser.feed(l.buf[:n])
	c.got += int64(used)
	if perr != nil {
		l.finish(c, c.parser.status, perr, req)
		return
	}
	if done {
		l.finish(c, c.parser.status, nil, req)
	}
}

// finish records the request on c and starts the next one. A kept-alive connection that the
// server closed before answering is stale: it is reopened and the request resent, uncounted.
func (l *evLoop) finish(c *evConn, status int, err error, req []byte) {
	end := time.Now()
	stale := err != nil && c.used && c.got == 0 && !errors.As(err, new(*connectError)) && !errors.Is(err, errEpollTimeout)
	keep := err == nil && c.parser.keep && !l.r.o.NoKeepAlive
	if !keep {
		l.drop(c)
	}
	if stale {
		nc, derr := l.dial()
		if derr == nil {
			nc.start, nc.deadline, nc.measured, nc.active = c.start, end.Add(l.r.o.timeout()), c.measured, true
			nc.parser.head = c.parser.head
			if !nc.connecting {
				l.write(nc, req)
			}
			return
		}
		err = &connectError{derr}
	}
	if err == nil && status >= 400 {
		err = &statusError{status}
	}
	l.record(c.start, end, status, c.got, err, c.measured)
	c.active = false
	if keep {
		c.used = true
		l.next(c, req, end)
	} else {
		l.next(nil, req, end)
	}
}

func (l *evLoop) record(start, end time.Time, status int, n int64, err error, measured bool) {
	if !measured {
		return
	}
	res := Result{Intended: start, Start: start, Latency: end.Sub(start), Service: end.Sub(start), Status: status, Bytes: n, Err: err}
	// The loop owns its shard (Options.Loops is at most the number of shards) and the shards
	// are read only after every loop has returned: no lock.
	sh := l.sh
	sh.m.Add(&res, 0)
	if end.After(sh.lastEnd) {
		sh.lastEnd = end
	}
	l.r.done.Add(1)
	if err != nil {
		l.r.errs.Add(1)
	}
}
