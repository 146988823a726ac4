//go:build !linux

package store

import (
	"errors"
	"os"
	"syscall"
)

var (
	errNoSpace    = syscall.ENOSPC
	errNoAllocate = errors.New("no fallocate on this system: no room is held ahead")
)

// allocate cannot allocate blocks ahead here: the store holds no room.
func allocate(*os.File, int64, int64) error { return errNoAllocate }

// release has nothing to give back here.
func release(*os.File, int64, int64) error { return nil }

// freeSpace is not known here.
func freeSpace(string) string { return "its free space unknown" }
