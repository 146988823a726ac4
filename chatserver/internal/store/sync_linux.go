package store

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// rawWriteMax is the largest record writeAt copies with a raw system call.
const rawWriteMax = 64 << 10

// writeAt writes p to f at off. A record of up to rawWriteMax bytes is
// copied into the page cache by a raw pwrite(2), outside Go's syscall
// bookkeeping, whose entry woke the runtime's monitor thread (sysmon)
// after each idle moment: with --no-fsync, where nothing else of a send
// goes through it, that was a tenth of the send's CPU (BENCHMARKS.md).
// Under memory pressure the kernel may hold the copy back; its thread then
// keeps its P, and a stop-the-world waits as long, as it would for a fault
// on a memory-mapped file's page. Larger writes keep Go's wrapper.
func writeAt(f *os.File, p []byte, off int64) error {
	if len(p) > rawWriteMax {
		_, err := f.WriteAt(p, off)
		return err
	}
	fd := f.Fd()
	defer runtime.KeepAlive(f)
	for len(p) > 0 {
		n, _, e := syscall.RawSyscall6(syscall.SYS_PWRITE64, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(off), 0, 0)
		switch {
		case e == syscall.EINTR:
			continue
		case e != 0:
			return &os.PathError{Op: "write", Path: f.Name(), Err: e}
		case n == 0:
			return &os.PathError{Op: "write", Path: f.Name(), Err: io.ErrShortWrite}
		}
		p, off = p[n:], off+int64(n)
	}
	return nil
}

// fdatasync flushes f's data, and its size when it grew, to the disk.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}

// syncDir makes the names of the files created in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}
