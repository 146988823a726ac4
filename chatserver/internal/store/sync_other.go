//go:build !linux

package store

import "os"

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
