package load

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wasmgap/wasmgap/internal/epoll"
)

// The fan-out receivers read their streams on event loops (streamLoops), not each on a
// goroutine parked in a read: a broadcast to 10,000 receivers would otherwise cost 10,000
// goroutine wake-ups through Go's netpoller and two reads each, on the same cores as the
// server under test. A receiver logs in on its own goroutine as before (dial, the answer's
// head or the WebSocket handshake, through package net), then hands the connection's socket
// to a loop and waits, parked, for the stream to end: the loop reads what is pending on each
// ready socket (level-triggered, one read per delivery into the loop's buffer), parses SSE
// events or WebSocket frames incrementally (sseParser, wsParser) and calls the receiver's
// handler, which records the delivery as the goroutine did. On an error or the stream's end
// the loop closes the socket and wakes the receiver, which reconnects as before.

const streamLoopsSupported = true

// streamsOnLoops counts the streams handed to a loop since the process started (tests).
var streamsOnLoops atomic.Int64

// streamLoops are the event loops of one run's receivers.
type streamLoops struct {
	loops []*streamLoop
	next  int
	mu    sync.Mutex // next
	wg    sync.WaitGroup
}

// streamLoop is one event loop: an epoll set, its streams by file descriptor, and a read
// buffer they share.
type streamLoop struct {
	set     *epoll.Set
	mu      sync.Mutex // streams; held while the loop handles a batch of events
	streams []*loopStream
	stopped bool
	buf     []byte
	events  []epoll.Event
}

// loopStream is one receiver's stream on a loop.
type loopStream struct {
	fd      int
	s       *subscriber
	p       streamParser
	onEvent func(event)
	ended   chan error // the stream's end, sent once
}

// newStreamLoops starts n event loops (at least one).
func newStreamLoops(n int) (*streamLoops, error) {
	ls := &streamLoops{}
	for range max(n, 1) {
		set, err := epoll.New()
		if err != nil {
			ls.stop()
			return nil, err
		}
		l := &streamLoop{set: set, buf: make([]byte, 64<<10), events: make([]epoll.Event, 256)}
		ls.loops = append(ls.loops, l)
		ls.wg.Go(l.run)
	}
	return ls, nil
}

// defaultStreamLoops is how many loops a run uses: half the processors, the other half being
// the server's when it runs on the same machine.
func defaultStreamLoops() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// stop ends the loops and closes the streams still on them; their receivers are told the
// stream ended. It waits for the loops to return.
func (ls *streamLoops) stop() {
	for _, l := range ls.loops {
		l.mu.Lock()
		l.stopped = true
		for _, st := range l.streams {
			if st != nil {
				l.end(st, errStreamEnded)
			}
		}
		l.mu.Unlock()
	}
	ls.wg.Wait()
	for _, l := range ls.loops {
		l.set.Close()
	}
}

// pick is the loop for the next stream, in turn.
func (ls *streamLoops) pick() *streamLoop {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.loops[ls.next%len(ls.loops)]
	ls.next++
	return l
}

func (l *streamLoop) run() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	nextYield := time.Now().Add(yieldEvery)
	for {
		// While a broadcast comes in, more sockets are ready at each look: a poll that does
		// not wait, without the scheduler's bookkeeping, finds them. Only when none is does
		// the loop wait, through the scheduler (not a raw syscall), so that a waiting loop
		// gives its processor to other goroutines.
		n, err := l.set.Poll(l.events)
		if n == 0 && err == nil {
			n, err = l.set.Wait(l.events, checkEvery)
		}
		l.mu.Lock()
		if l.stopped {
			l.mu.Unlock()
			return
		}
		if err != nil {
			// Cannot happen with a valid set; end every stream rather than spin.
			for _, st := range l.streams {
				if st != nil {
					l.end(st, err)
				}
			}
			l.stopped = true
			l.mu.Unlock()
			return
		}
		for i := range n {
			fd := int(epoll.Token(&l.events[i]))
			if fd < len(l.streams) && l.streams[fd] != nil {
				l.handle(l.streams[fd])
			}
		}
		l.mu.Unlock()
		if now := time.Now(); now.After(nextYield) {
			nextYield = now.Add(yieldEvery)
			runtime.Gosched()
		}
	}
}

// handle reads what is pending on st: one read, more only while they fill the buffer.
func (l *streamLoop) handle(st *loopStream) {
	for {
		n, err := rawRead(st.fd, l.buf)
		switch {
		case err == syscall.EAGAIN || err == syscall.EINTR:
			return
		case err != nil:
			l.end(st, fmt.Errorf("read stream: %w", err))
			return
		case n == 0:
			l.end(st, st.p.end())
			return
		}
		if err := st.feed(l.buf[:n]); err != nil {
			l.end(st, err)
			return
		}
		if n < len(l.buf) {
			return
		}
	}
}

// feed parses bytes of the stream.
func (st *loopStream) feed(b []byte) error { return st.p.feed(st.s, b, st.onEvent, st.reply) }

// reply writes a control frame to the server (a pong, the close), masked as a client's must
// be. Control frames are small: one that does not fit the socket's send buffer at once is
// an error.
func (st *loopStream) reply(opcode byte, payload []byte) error {
	f := wsClientFrame(opcode, payload)
	w, err := rawWrite(st.fd, f)
	if err == nil && w < len(f) {
		err = fmt.Errorf("%d of %d bytes written", w, len(f))
	}
	if err != nil {
		return fmt.Errorf("write WebSocket control frame %d: %w", opcode, err)
	}
	return nil
}

// add puts a stream on the loop. False when the loops are stopped.
func (l *streamLoop) add(st *loopStream) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return errStreamEnded
	}
	if err := l.set.Add(st.fd, epoll.In|epoll.RDHup, uint64(st.fd)); err != nil {
		return err
	}
	if st.fd >= len(l.streams) {
		l.streams = append(l.streams, make([]*loopStream, st.fd+1-len(l.streams))...)
	}
	l.streams[st.fd] = st
	streamsOnLoops.Add(1)
	return nil
}

// end closes st's socket (which takes it out of the epoll set) and tells its receiver why.
// Called with l.mu held.
func (l *streamLoop) end(st *loopStream, err error) {
	if l.streams[st.fd] != st {
		return
	}
	l.streams[st.fd] = nil
	syscall.Close(st.fd)
	st.ended <- err
	st.p.release()
}

// remove ends st if it is still on the loop (the run is over).
func (l *streamLoop) remove(st *loopStream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st.fd < len(l.streams) {
		l.end(st, nil)
	}
}

// detach takes the socket out of conn, which is closed: the returned descriptor (non-blocking,
// close-on-exec) is the caller's alone, unknown to Go's netpoller.
func detach(conn net.Conn) (int, error) {
	defer conn.Close()
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return -1, fmt.Errorf("detach a %T: not a TCP connection", conn)
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var dupErr error
	if err := rc.Control(func(s uintptr) {
		r, _, e := syscall.Syscall(syscall.SYS_FCNTL, s, syscall.F_DUPFD_CLOEXEC, 0)
		if e != 0 {
			dupErr = e
			return
		}
		fd = int(r)
	}); err != nil {
		return -1, err
	}
	if dupErr != nil {
		return -1, fmt.Errorf("dup the stream's socket: %w", dupErr)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return -1, fmt.Errorf("set the stream's socket non-blocking: %w", err)
	}
	return fd, nil
}

// readOnLoop reads a stream on a loop until it ends or ctx does: conn is the logged-in
// connection, pending the bytes of the stream already read from it with the answer's head.
func (s *subscriber) readOnLoop(ctx context.Context, conn net.Conn, pending []byte, p streamParser, onEvent func(event)) error {
	fd, err := detach(conn)
	if err != nil {
		return err
	}
	st := &loopStream{fd: fd, s: s, p: p, onEvent: onEvent, ended: make(chan error, 1)}
	if len(pending) > 0 {
		if err := st.feed(pending); err != nil {
			syscall.Close(fd)
			return err
		}
	}
	l := s.loops.pick()
	if err := l.add(st); err != nil {
		syscall.Close(fd)
		return err
	}
	select {
	case err := <-st.ended:
		return err
	case <-ctx.Done():
		l.remove(st)
		return nil
	}
}
