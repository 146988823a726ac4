//go:build unix

package main

import (
	"os"
	"syscall"
)

// minorFaults returns the minor page faults of an ended process.
func minorFaults(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0, false
	}
	return int64(ru.Minflt), true
}
