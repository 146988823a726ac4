package explain

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

//go:embed python/bytecode.py
var disScript []byte

// explainPython lists what CPython executes instead of machine code for the python
// engine: the kernel's bytecode (dis) after the warm-up, as CPython's specialising
// interpreter (3.11 on) rewrote it, and how many bytecode instructions one call of the
// kernel runs, counted by tracing a call with the explained arguments (capped at
// fib_rec-like recursions of a few hundred thousand calls: a traced call is slow).
func explainPython(ctx context.Context, r request) ([]Listing, error) {
	file, cleanup, err := driverSource("python/kernels.py")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	dir := filepath.Dir(file)
	if err := os.WriteFile(filepath.Join(dir, "bytecode.py"), disScript, 0o600); err != nil {
		return nil, err
	}
	args := []string{"-S", filepath.Join(dir, "bytecode.py"), dir, r.k.Name, strconv.Itoa(int(r.opts.warmupTime() / time.Millisecond))}
	for _, a := range r.args {
		args = append(args, strconv.Itoa(a))
	}
	out, _, err := runTool(ctx, "python3", "apt-get install python3", args...)
	if err != nil {
		return nil, fmt.Errorf("python3 dis of %s: %w", r.k.Label(r.args), err)
	}
	var res struct {
		Version  string `json:"version"`
		Adaptive bool   `json:"adaptive"`
		Warm     int    `json:"warm_calls"`
		Lines    []Line `json:"lines"`
		Size     int    `json:"size"`
		Ops      int    `json:"ops"`
		Calls    int    `json:"calls"`
		Returns  int    `json:"returns"`
		Partial  bool   `json:"partial"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("read python3's dis: %w", err)
	}
	from := "dis.get_instructions, and one traced call of " + r.k.Label(r.args)
	if res.Adaptive {
		from = "dis.get_instructions(adaptive=True) after the warm-up, and one traced call of " + r.k.Label(r.args)
	}
	l := bytecodeListing(r.engine, "CPython "+res.Version+" bytecode", r.k.Name+" (kernels.py)", from, res.Lines)
	l.Bytes = res.Size
	l.Notes = append(l.Notes, noMachineCode("CPython", fmt.Sprintf("these %d bytecode instructions", l.Instructions)))
	if res.Adaptive {
		l.Notes = append(l.Notes, fmt.Sprintf("after the warm-up (%d calls), as CPython's specialising interpreter rewrote them: an instruction specialised to the types it saw (BINARY_OP_ADD_INT) still is one dispatch", res.Warm))
	}
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
