package nbio

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"

	"github.com/wasmgap/wasmgap/internal/epoll"
)

// Watcher tells when the clients of many connections that send nothing
// more (event streams, once their request is read) go away, from one
// goroutine and one epoll set: an idle connection then needs no goroutine
// parked in its read. What a client sends all the same is read and
// dropped. It also tells, once, when a connection whose reads its owner
// keeps has something to read (Readable): an idle WebSocket.
type Watcher struct {
	set  *epoll.Set
	wake [2]int // a pipe whose read end in set wakes the loop to stop

	mu      sync.Mutex
	next    uint64
	watched map[uint64]watched // under mu: by token
	closed  bool               // under mu

	done chan struct{}
}

// NewWatcher starts a Watcher's loop. Close stops it.
func NewWatcher() (*Watcher, error) {
	set, err := epoll.NewAwaitable()
	if err != nil {
		return nil, fmt.Errorf("epoll for idle connections: %w", err)
	}
	w := &Watcher{set: set, watched: map[uint64]watched{}, done: make(chan struct{})}
	if err := syscall.Pipe2(w.wake[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		set.Close()
		return nil, fmt.Errorf("epoll for idle connections: %w", err)
	}
	if err := set.Add(w.wake[0], epoll.In, 0); err != nil {
		w.closeFDs()
		return nil, fmt.Errorf("epoll for idle connections: %w", err)
	}
	w.next = 1 // 0 is the wake pipe's
	go w.loop()
	return w, nil
}

// Watch calls gone, once, from a goroutine of its own, when c's client has
// gone (its end closed, the connection reset). Stop ends the watch; it must
// come before c is closed. errors.ErrUnsupported: c is not a socket, or
// the Watcher is closed; the caller then reads c itself.
func (w *Watcher) Watch(c net.Conn, gone func()) (Watch, error) {
	return w.add(c, watched{gone: gone})
}

// Readable calls ready, once, from a goroutine of its own, when c has
// something to read (or its client has gone, or the Watcher closes), and
// reads nothing itself: the caller reads c then, and watches it again
// when it is idle once more. Stop ends the watch, as Watch's.
func (w *Watcher) Readable(c net.Conn, ready func()) (Watch, error) {
	return w.add(c, watched{gone: ready, notify: true})
}

// add watches c's descriptor with e's callback.
func (w *Watcher) add(c net.Conn, e watched) (Watch, error) {
	if w == nil {
		return Watch{}, errors.ErrUnsupported
	}
	rc, err := RawConn(c)
	if err != nil {
		return Watch{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return Watch{}, errors.ErrUnsupported
	}
	token := w.next
	w.next++
	var fd int
	if err := rc.Control(func(f uintptr) { fd = int(f) }); err != nil {
		return Watch{}, err
	}
	e.fd = fd
	w.watched[token] = e
	// Level-triggered: what is left unread is reported again.
	if err := w.set.Add(fd, epoll.In|epoll.RDHup, token); err != nil {
		delete(w.watched, token)
		return Watch{}, fmt.Errorf("watch a connection: %w", err)
	}
	return Watch{w: w, token: token}, nil
}

// Watch is one connection's watch.
type Watch struct {
	w     *Watcher
	token uint64
}

// Stop ends the watch (gone will not be called after it returns, unless it
// was called already); false when gone was called or is being called.
// Call it before closing the connection: its descriptor may be reused.
func (s Watch) Stop() bool {
	w := s.w
	if w == nil {
		return false // the zero Watch: nothing watched
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.watched[s.token]
	if ok {
		w.forget(s.token, e)
	}
	return ok
}

// forget ends the watch of token (entry e), under mu.
func (w *Watcher) forget(token uint64, e watched) {
	delete(w.watched, token)
	w.set.Delete(e.fd)
}

// watched is one connection's entry: its descriptor (valid until Stop,
// which comes before the connection is closed) and what to call.
type watched struct {
	fd   int
	gone func()
	// notify: a Readable watch, which ends at the first event and reads
	// nothing.
	notify bool
}

// Close stops the loop and tells every watch left that its client has gone
// (nobody would see it go any more): their owners end them.
func (w *Watcher) Close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.mu.Unlock()
	syscall.Write(w.wake[1], []byte{0})
	<-w.done
	w.mu.Lock()
	left := w.watched
	w.watched = map[uint64]watched{} // Stop finds nothing: no epoll_ctl on a closed set
	w.closeFDs()
	w.mu.Unlock()
	for _, e := range left {
		go e.gone()
	}
}

func (w *Watcher) closeFDs() {
	syscall.Close(w.wake[0])
	syscall.Close(w.wake[1])
	w.set.Close()
}

func (w *Watcher) loop() {
	defer close(w.done)
	events := make([]epoll.Event, 128)
	var scratch [512]byte
	for {
		n, err := w.set.Await(events)
		if err != nil {
			return // the set is gone: nothing more can be watched
		}
		for _, ev := range events[:n] {
			token := epoll.Token(&ev)
			if token == 0 {
				return // Close
			}
			w.mu.Lock()
			e, ok := w.watched[token]
			if !ok {
				w.mu.Unlock()
				continue // stopped meanwhile
			}
			// Read what the client sent, under mu so that Stop (and the
			// close after it) waits for this read: the descriptor is still
			// the connection's.
			ended := e.notify || ev.Events&(epoll.RDHup|epoll.Hup|epoll.Err) != 0 || drain(e.fd, scratch[:])
			if ended {
				w.forget(token, e)
			}
			w.mu.Unlock()
			if ended {
				go e.gone()
			}
		}
	}
}

// drain reads and drops what a watched connection sent, without waiting;
// true when its client's end is closed or the connection failed.
func drain(fd int, buf []byte) bool {
	for {
		n, err := retry(func() (int, error) { return read(fd, buf) })
		switch {
		case err == syscall.EAGAIN:
			return false
		case err != nil || n == 0:
			return true
		}
	}
}
