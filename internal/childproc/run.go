package childproc

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"time"
)

// waitDelay bounds how long Wait waits for a killed command's pipes: a grandchild outside
// the group could hold them open.
const waitDelay = 5 * time.Second

// Command returns the command to run name with args, as exec.CommandContext does, except
// that ctx's end kills its whole process group (KillGroup), not the process alone. Run it
// with Start or CombinedOutput.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Cancel = func() error { return KillGroup(cmd) }
	cmd.WaitDelay = waitDelay
	return cmd
}

// CombinedOutput runs cmd through Start (its own process group, dying with this process),
// waits for it and returns what it wrote to stdout and stderr, as exec.Cmd's
// CombinedOutput does.
func CombinedOutput(cmd *exec.Cmd) ([]byte, error) {
	if cmd.Stdout != nil || cmd.Stderr != nil {
		return nil, errors.New("childproc: CombinedOutput of a command whose Stdout or Stderr is set")
	}
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := Start(cmd); err != nil {
		return nil, err
	}
	err := cmd.Wait()
	return b.Bytes(), err
}
