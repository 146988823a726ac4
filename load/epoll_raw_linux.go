package load

import (
	"syscall"
	"unsafe"
)

// The event loops read and write without telling Go's scheduler (RawSyscall): on non-blocking
// sockets these calls return at once, so the scheduler's syscall bookkeeping (twice per
// request) buys nothing. epoll_wait, which blocks, goes through the scheduler (epoll.Set's
// Wait), so that a waiting loop gives its processor to other goroutines (a server in the same
// process, as with the load page and the seed preset).

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
