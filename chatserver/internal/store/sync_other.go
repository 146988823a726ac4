//go:build !linux

package store

import "os"

// writeAt writes p to f at off.
func writeAt(f *os.File, p []byte, off int64) error {
	_, err := f.WriteAt(p, off)
	return err
}

// fdatasync flushes f to the disk.
func fdatasync(f *os.File) error { return f.Sync() }

// syncDir syncs dir where the system can (not Windows): best effort.
func syncDir(dir string) error {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
