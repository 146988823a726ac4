package load

import (
	"syscall"
	"unsafe"
)

// The event loops read and write without telling Go's scheduler (RawSyscall): on non-blocking
// sockets these calls return at once, so the scheduler's syscall bookkeeping (twice per
// request) buys nothing. epoll_wait, which blocks, goes through syscall.EpollWait, so that a
// waiting loop gives its processor to other goroutines (a server in the same process, as with
// the load page and the seed preset).

func rawRead(fd int, p []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return int(n), e
	}
	return int(n), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return int(n), e
	}
	return int(n), nil
}

// rawEpollPoll returns the ready events of the epoll set ep without waiting (epoll_pwait with
// a zero timeout, which every Linux architecture has).
func rawEpollPoll(ep int, events []syscall.EpollEvent) (int, error) {
	n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(unsafe.SliceData(events))), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
