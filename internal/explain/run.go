package explain

import (
	"bytes"
	"fmt"
	"os/exec"

	"github.com/wasmgap/wasmgap/internal/capped"
	"github.com/wasmgap/wasmgap/internal/childproc"
)

// output runs cmd (made by childproc.Command) through childproc.Start and returns what it
// wrote to stdout; a failure's error carries the first line of its stderr.
func output(cmd *exec.Cmd) ([]byte, error) {
	var stdout bytes.Buffer
	stderr := &capped.Buffer{Head: 16 << 10, Tail: 16 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := childproc.Start(cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	if err := cmd.Wait(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%w%s", err, firstLineOf(stderr.String()))
	}
	return stdout.Bytes(), nil
}
