//go:build unix

package custom

import (
	"os/exec"
	"syscall"
)

// execLimited sets the limits on this process and replaces it with argv.
func execLimited(l Limits, argv, env []string) error {
	set := func(res int, v uint64) error {
		return syscall.Setrlimit(res, &syscall.Rlimit{Cur: v, Max: v})
	}
	for _, r := range []struct {
		res int
		v   uint64
	}{
		{syscall.RLIMIT_AS, l.AddressSpace},
		{syscall.RLIMIT_CPU, l.CPU},
		{syscall.RLIMIT_FSIZE, l.FileSize},
		{syscall.RLIMIT_NOFILE, l.Files},
		{syscall.RLIMIT_CORE, 0},
	} {
		if err := set(r.res, r.v); err != nil {
			return err
		}
	}
	return syscall.Exec(argv[0], argv, env)
}

func limitSelf(as uint64) error {
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: as, Max: as}); err != nil {
		return err
	}
	return syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
}

// stopGroup stops cmd's process group (SIGSTOP) where it is.
func stopGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGSTOP) }

// continueGroup continues a group stopGroup stopped.
func continueGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT) }
