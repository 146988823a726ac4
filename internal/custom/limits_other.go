//go:build !unix

package custom

import (
	"errors"
	"os/exec"
)

func execLimited(Limits, []string, []string) error {
	return errors.New("user kernels are built only on Unix systems, where the build's limits can be set")
}

func limitSelf(uint64) error {
	return errors.New("user kernels run only on Unix systems, where their memory can be limited")
}

// stopGroup cannot stop a process here: the warm-up only waits before it starts.
func stopGroup(*exec.Cmd) error {
	return errors.New("processes are stopped only on Unix systems")
}

func continueGroup(*exec.Cmd) error { return nil }
