package explain

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/wasmgap/wasmgap/internal/childproc"
	"github.com/wasmgap/wasmgap/internal/engine/external"
)

//go:embed python/bytecode.py
var disScript []byte

// explainPython lists what CPython executes instead of machine code for the python
// engine: the kernel's bytecode (dis), and how many bytecode instructions one call of the
// kernel runs, counted by tracing a call with the explained arguments (capped at
// fib_rec-like recursions of a few hundred thousand calls: a traced call is slow).
func explainPython(ctx context.Context, r request) ([]Listing, error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, fmt.Errorf("python3 %w (apt-get install python3)", errNoTool)
	}
	src, err := external.Source("python/kernels.py")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "wasmgap-explain-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "kernels.py"), src, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "bytecode.py"), disScript, 0o600); err != nil {
		return nil, err
	}
	args := []string{"-S", filepath.Join(dir, "bytecode.py"), dir, r.k.Name}
	for _, a := range r.args {
		args = append(args, strconv.Itoa(a))
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := output(childproc.Command(ctx, py, args...))
	if err != nil {
		return nil, fmt.Errorf("python3 dis of %s%s: %w", r.k.Label(r.args), timedOut(ctx), err)
	}
	var res struct {
		Version string `json:"version"`
		Lines   []Line `json:"lines"`
		Size    int    `json:"size"`
		Ops     int    `json:"ops"`
		Calls   int    `json:"calls"`
		Returns int    `json:"returns"`
		Partial bool   `json:"partial"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("read python3's dis: %w", err)
	}
	heads := map[int]bool{}
	for _, l := range res.Lines {
		if l.BackEdge {
			heads[l.Target] = true
		}
	}
	for i := range res.Lines {
		res.Lines[i].LoopHead = heads[res.Lines[i].Offset]
	}
	l := Listing{Tier: "CPython " + res.Version + " bytecode", Kind: KindBytecode, Function: r.k.Name,
		From: "dis.get_instructions, and one traced call of " + r.k.Label(r.args), Lines: res.Lines, Bytes: res.Size}
	summarize(&l)
	switch {
	case !res.Partial && res.Calls > 0:
		l.OpsPerCall = float64(res.Ops) / float64(res.Calls)
		l.Notes = append(l.Notes, fmt.Sprintf("CPython interprets these instructions, one dispatch each: %d executed in %d calls of %s, %.1f a call",
			res.Ops, res.Calls, r.k.Name, l.OpsPerCall))
	case res.Returns > 0:
		// Counted over the calls that returned before the budget ran out.
		l.OpsPerCall = float64(res.Ops) / float64(res.Calls)
		l.Notes = append(l.Notes, fmt.Sprintf("CPython interprets these instructions, one dispatch each: about %.1f a call (%d executed in the first %d calls of %s, where the count stopped)",
			l.OpsPerCall, res.Ops, res.Calls, r.k.Name))
	default:
		l.Notes = append(l.Notes, fmt.Sprintf("CPython interprets these instructions, one dispatch each: more than %d in one call of %s (the count stopped there)", res.Ops, r.k.Label(r.args)))
	}
	return []Listing{l}, nil
}

// timedOut says " (timed out)" when ctx's deadline passed.
func timedOut(ctx context.Context) string {
	if ctx.Err() != nil {
		return " (timed out)"
	}
	return ""
}
