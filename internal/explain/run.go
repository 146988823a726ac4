package explain

import (
	"fmt"
	"os/exec"

	"github.com/wasmgap/wasmgap/internal/capped"
	"github.com/wasmgap/wasmgap/internal/childproc"
)

// maxToolOutput bounds what a tool's stdout and stderr keep (perf script's samples, the
// opcodes of every function of a driver).
const maxToolOutput = 64 << 20

// run runs cmd (made by childproc.Command) through childproc.Start and returns what it
// wrote to stdout and stderr; a failure's error carries the first line of its stderr.
func run(cmd *exec.Cmd) (stdout, stderr []byte, err error) {
	out := &capped.Buffer{Head: maxToolOutput}
	errb := &capped.Buffer{Head: maxToolOutput}
	cmd.Stdout, cmd.Stderr = out, errb
	if err := childproc.Start(cmd); err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	if err := cmd.Wait(); err != nil {
		return []byte(out.String()), []byte(errb.String()), fmt.Errorf("%w%s", err, firstLineOf(errb.String()))
	}
	return []byte(out.String()), []byte(errb.String()), nil
}
