//go:build unix && !linux

package nbio

import "syscall"

// Elsewhere than Linux (rawcall_linux.go) socket options go through Go's
// syscall wrapper.

func setsockoptInt(fd, level, opt, value int) error {
	return syscall.SetsockoptInt(fd, level, opt, value)
}

func setLinger(fd int, l syscall.Linger) error {
	return syscall.SetsockoptLinger(fd, syscall.SOL_SOCKET, syscall.SO_LINGER, &l)
}
