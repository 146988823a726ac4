package store

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data, and its size when it grew, to the disk.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
