//go:build unix && !linux

package custom

import "syscall"

// setParentDeath does nothing where there is no parent-death signal: a build ends at its
// time limit.
func setParentDeath(*syscall.SysProcAttr) {}
