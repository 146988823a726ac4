package nbio

import (
	"net/netip"
	"syscall"
	"unsafe"
)

// The calls on a non-blocking socket here are made as raw system calls,
// outside Go's syscall bookkeeping: they never wait, so the scheduler has
// nothing to hand off while they run. Go's own wrapper enters and leaves
// a syscall state around each one, and entering it wakes the runtime's
// monitor thread (sysmon) whenever the process was idle before: a server
// that answers each request and goes idle again paid that wake-up, and
// sysmon's 20 µs naps after it, on every request (about a tenth of a
// send's CPU under `ab -c 10`; BENCHMARKS.md). A call that may wait
// (fdatasync, epoll_wait) keeps Go's wrapper.

// read reads from fd, which must be non-blocking.
func read(fd int, p []byte) (int, error) { return rawIO(syscall.SYS_READ, fd, p) }

// write writes to fd, which must be non-blocking.
func write(fd int, p []byte) (int, error) { return rawIO(syscall.SYS_WRITE, fd, p) }

func rawIO(trap uintptr, fd int, p []byte) (int, error) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, e := syscall.RawSyscall(trap, uintptr(fd), uintptr(ptr), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// closeFD closes a socket that lingers in the background, as sockets do
// by default or with a linger of zero (a reset): close does not wait.
func closeFD(fd int) error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0); e != 0 {
		return e
	}
	return nil
}

// setsockoptInt sets a socket option of an int value.
func setsockoptInt(fd, level, opt, value int) error {
	v := int32(value)
	return setsockopt(fd, level, opt, unsafe.Pointer(&v), 4)
}

// setLinger sets SO_LINGER.
func setLinger(fd int, l syscall.Linger) error {
	return setsockopt(fd, syscall.SOL_SOCKET, syscall.SO_LINGER, unsafe.Pointer(&l), unsafe.Sizeof(l))
}

func setsockopt(fd, level, opt int, value unsafe.Pointer, size uintptr) error {
	if _, _, e := syscall.RawSyscall6(syscall.SYS_SETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt), uintptr(value), size, 0); e != 0 {
		return e
	}
	return nil
}

// shutdownWrite ends a socket's sending side.
func shutdownWrite(fd int) error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_SHUTDOWN, uintptr(fd), syscall.SHUT_WR, 0); e != 0 {
		return e
	}
	return nil
}

// sockname is a socket's own address.
func sockname(fd int) (netip.AddrPort, error) {
	var sa syscall.RawSockaddrAny
	size := uint32(syscall.SizeofSockaddrAny)
	if _, _, e := syscall.RawSyscall(syscall.SYS_GETSOCKNAME, uintptr(fd), uintptr(unsafe.Pointer(&sa)), uintptr(unsafe.Pointer(&size))); e != 0 {
		return netip.AddrPort{}, e
	}
	return addrOf(&sa), nil
}

// accept4 accepts a connection from the non-blocking listener lfd as a
// non-blocking, close-on-exec socket, with its peer's address.
func accept4(lfd int) (int, netip.AddrPort, error) {
	var sa syscall.RawSockaddrAny
	size := uint32(syscall.SizeofSockaddrAny)
	fd, _, e := syscall.RawSyscall6(syscall.SYS_ACCEPT4, uintptr(lfd), uintptr(unsafe.Pointer(&sa)),
		uintptr(unsafe.Pointer(&size)), syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0, 0)
	if e != 0 {
		return -1, netip.AddrPort{}, e
	}
	return int(fd), addrOf(&sa), nil
}

// addrOf is a socket's address (its peer's, or its own) as net.TCPAddr
// shows it: an IPv4 address of an IPv6 socket unmapped.
func addrOf(sa *syscall.RawSockaddrAny) netip.AddrPort {
	switch sa.Addr.Family {
	case syscall.AF_INET:
		a := (*syscall.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), port(a.Port))
	case syscall.AF_INET6:
		a := (*syscall.RawSockaddrInet6)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), port(a.Port))
	}
	return netip.AddrPort{}
}

// port reads a sockaddr's port, stored in network byte order.
func port(p uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(&p))
	return uint16(b[0])<<8 | uint16(b[1])
}
