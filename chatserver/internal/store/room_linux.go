package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

var (
	errNoSpace    = syscall.ENOSPC
	errNoAllocate = errors.New("the filesystem cannot allocate a file's blocks ahead (no fallocate)")
)

// allocate allocates the blocks of f from off for n bytes, its size
// unchanged.
func allocate(f *os.File, off, n int64) error {
	if n <= 0 {
		return nil
	}
	for {
		err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, off, n)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EOPNOTSUPP || err == unix.ENOSYS:
			return errNoAllocate
		}
		return err
	}
}

// release gives back the blocks of f from off for n bytes, its size
// unchanged: a hole where they lie within the file; past its end, where a
// punched hole is ignored (ext4), the file is grown over them and cut
// back, which frees every block past its end, and the blocks from its end
// to off are allocated again. Nothing of f is read or written past its
// size meanwhile.
func release(f *os.File, off, n int64) error {
	fi, err := f.Stat()
	if err != nil || n <= 0 {
		return err
	}
	size, end := fi.Size(), off+n
	if off < size {
		if err := punch(f, off, min(end, size)-off); err != nil {
			return err
		}
	}
	if end <= size {
		return nil
	}
	if err := f.Truncate(end); err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		return err
	}
	return allocate(f, size, off-size)
}

// punch makes a hole in f from off for n bytes.
func punch(f *os.File, off, n int64) error {
	for {
		err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
		if err != unix.EINTR {
			return err
		}
	}
}

// freeSpace says how much room the disk holding path has left.
func freeSpace(path string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(path), &st); err != nil {
		return "its free space unknown: " + err.Error()
	}
	return fmt.Sprintf("%d bytes free on it", int64(st.Bavail)*st.Bsize)
}
