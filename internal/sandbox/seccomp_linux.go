package sandbox

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// loadRaw loads a seccomp filter on every thread of the process; no_new_privs must be
// set already (the deny filter sets it).
func loadRaw(filter []syscall.SockFilter) error {
	prog := syscall.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, errno := syscall.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return errno
	}
	return nil
}
