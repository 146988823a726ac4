package epoll

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// Set is an epoll set.
type Set struct {
	fd int
	f  *os.File        // NewAwaitable's: fd, non-blocking, in Go's netpoller; Close closes it
	rc syscall.RawConn // f's, where Await waits
}

// The events a descriptor is registered for, and that Wait reports.
const (
	In    = syscall.EPOLLIN
	Out   = syscall.EPOLLOUT
	RDHup = syscall.EPOLLRDHUP
	Hup   = syscall.EPOLLHUP
	Err   = syscall.EPOLLERR
)

// Event is one ready descriptor: its Events and, through Token, the token
// it was registered with.
type Event = syscall.EpollEvent

// Token is the token ev's descriptor was registered with.
func Token(ev *Event) uint64 { return uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32 }

// New makes a set (close-on-exec), for Wait and Poll.
func New() (*Set, error) {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	return &Set{fd: fd}, nil
}

// NewAwaitable makes a set for Await as well: non-blocking and registered
// in Go's netpoller, whose own epoll set then hears of each of its events
// (so a set only polled or waited on is made by New).
func NewAwaitable() (*Set, error) {
	s, err := New()
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(s.fd, true); err != nil {
		s.Close()
		return nil, fmt.Errorf("epoll set non-blocking: %w", err)
	}
	s.f = os.NewFile(uintptr(s.fd), "epoll")
	if s.rc, err = s.f.SyscallConn(); err != nil {
		s.Close()
		return nil, fmt.Errorf("epoll set: %w", err)
	}
	return s, nil
}

// Add registers fd for events (level-triggered), its events carrying token.
func (s *Set) Add(fd int, events uint32, token uint64) error {
	return s.ctl(syscall.EPOLL_CTL_ADD, fd, events, token)
}

// Modify changes what fd is registered for, and its token.
func (s *Set) Modify(fd int, events uint32, token uint64) error {
	return s.ctl(syscall.EPOLL_CTL_MOD, fd, events, token)
}

// Delete takes fd out of the set. Closing fd does too, once no other
// descriptor refers to its file.
func (s *Set) Delete(fd int) error {
	if err := syscall.EpollCtl(s.fd, syscall.EPOLL_CTL_DEL, fd, nil); err != nil {
		return fmt.Errorf("epoll_ctl del %d: %w", fd, err)
	}
	return nil
}

func (s *Set) ctl(op, fd int, events uint32, token uint64) error {
	ev := Event{Events: events}
	// The event's data is 8 bytes: Fd and Pad hold the token's two halves.
	ev.Fd, ev.Pad = int32(uint32(token)), int32(uint32(token>>32))
	if err := syscall.EpollCtl(s.fd, op, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl %d: %w", fd, err)
	}
	return nil
}

// Wait waits up to timeout (negative: without end) for ready descriptors
// and fills events with them, returning how many. It goes through Go's
// scheduler, so that a waiting loop gives its processor to other
// goroutines. A signal's interruption returns 0 and no error.
func (s *Set) Wait(events []Event, timeout time.Duration) (int, error) {
	ms := -1
	if timeout >= 0 {
		ms = int(timeout / time.Millisecond)
	}
	n, err := syscall.EpollWait(s.fd, events, ms)
	switch {
	case err == syscall.EINTR:
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("epoll_wait: %w", err)
	}
	return n, nil
}

// Poll fills events with the descriptors ready now, without waiting and
// without the scheduler's bookkeeping for a system call (epoll_pwait with a
// zero timeout, as a raw system call): a busy loop finds more work at each
// look, and waits with Wait only when there is none.
func (s *Set) Poll(events []Event) (int, error) {
	n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(s.fd), uintptr(unsafe.Pointer(unsafe.SliceData(events))), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, fmt.Errorf("epoll_pwait: %w", e)
	}
	return int(n), nil
}

// Await waits without end for ready descriptors and fills events with
// them, returning how many, as Wait(events, -1) does, but waits in Go's
// netpoller, where the set is registered as a descriptor of its own, not
// in a blocking epoll_wait: no thread is held in a system call while it
// waits, and its look at the set is a raw epoll_pwait that never blocks
// (Poll). A loop that waits long and wakes often (a watcher of idle
// connections) then neither holds a thread in a system call that the
// runtime's monitor must take back nor wakes that monitor at each wait.
func (s *Set) Await(events []Event) (n int, err error) {
	if s.rc == nil {
		return 0, errors.New("epoll: Await on a set made by New, not NewAwaitable")
	}
	rerr := s.rc.Read(func(uintptr) bool {
		n, err = s.Poll(events)
		return err != nil || n > 0
	})
	if rerr != nil {
		return 0, fmt.Errorf("wait for epoll: %w", rerr)
	}
	return n, err
}

// Close closes the set.
func (s *Set) Close() error {
	if s.f != nil {
		return s.f.Close()
	}
	return syscall.Close(s.fd)
}
