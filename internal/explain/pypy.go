package explain

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/wasmgap/wasmgap/internal/engine/external"
)

// KindTrace is a tracing JIT's optimised trace, in the JIT's own operations (PyPy's
// resops): what it compiles to machine code, one operation a few instructions.
const KindTrace = "trace"

// pypyTrace is one trace of PyPy's jit-log-opt: a loop or a bridge, its header and its
// operations.
type pypyTrace struct {
	header string // "# Loop 5 (fib_rec;…) : entry bridge with 103 ops"
	loop   string // the loop's number, "" for a bridge
	guard  string // the guard a bridge leaves from ("0x7f…"), "" for a loop
	ops    []pypyOp
	end    int // the offset of "--end of the loop--": the trace's machine code size
}

// pypyOp is one operation of a trace, with the bytecodes (debug_merge_point) it comes
// from.
type pypyOp struct {
	off    int
	text   string
	merges []pypyMerge
}

// pypyMerge is a debug_merge_point: the bytecode at which the trace was, and how deep in
// inlined calls.
type pypyMerge struct {
	depth int
	fn    string // the function's name
	where string // "kernels.py:25-28~#20 CALL_FUNCTION"
	op    string // "CALL_FUNCTION"
}

var (
	pypyOpLine = regexp.MustCompile(`^\+(\d+): (.*)$`)
	pypyMergeL = regexp.MustCompile(`^debug_merge_point\((\d+), \d+, '([^;']*);([^']*)'\)`)
	pypyLoop   = regexp.MustCompile(`^# Loop (\d+) \(`)
	pypyBridge = regexp.MustCompile(`^# bridge out of Guard (0x[0-9a-f]+) `)
	// jit-backend-addr: "Loop 5 (…) has address 0x… to 0x… (bootstrap 0x…)",
	// "bridge out of Guard 0x… has address 0x… to 0x…".
	pypyAddr = regexp.MustCompile(`^(?:Loop (\d+) .*|bridge out of Guard (0x[0-9a-f]+)) has address 0x([0-9a-f]+) to 0x([0-9a-f]+)`)
	// jit-backend-dump: "CODE_DUMP @7f53461df000 +0  4889…"
	pypyDump   = regexp.MustCompile(`^CODE_DUMP @([0-9a-f]+) \+(\d+)\s+([0-9A-Fa-f]+)$`)
	pypyEnd    = regexp.MustCompile(`^\+(\d+): --end of the loop--`)
	pypyToken  = regexp.MustCompile(`descr=(TargetToken\(\d+\))`)
	pypyCallee = regexp.MustCompile(`descr=<Loop(\d+)>`)
)

// pypyCode is the machine code PyPy's backend wrote (jit-backend-dump) and where each
// loop's and bridge's code ends (jit-backend-addr).
type pypyCode struct {
	dumps []jitCode         // in the order written: a later one patches an earlier one
	ends  map[string]uint64 // "Loop 5" or "Guard 0x…" → the address the code ends at
}

// bytes returns the n bytes at addr, or false when the dumps do not hold them all.
func (c *pypyCode) bytes(addr uint64, n int) ([]byte, bool) {
	b := make([]byte, n)
	have := make([]bool, n)
	for _, d := range c.dumps {
		for i, v := range d.bytes {
			a := d.addr + uint64(i)
			if a >= addr && a < addr+uint64(n) {
				b[a-addr], have[a-addr] = v, true
			}
		}
	}
	for _, h := range have {
		if !h {
			return nil, false
		}
	}
	return b, true
}

// parsePyPyLog reads the traces of a PYPYLOG=jit-log-opt file, and with
// jit-backend-addr and jit-backend-dump in it, their machine code.
func parsePyPyLog(r io.Reader) ([]*pypyTrace, *pypyCode) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	code := &pypyCode{ends: map[string]uint64{}}
	var out []*pypyTrace
	var cur *pypyTrace
	var pending []pypyMerge
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasSuffix(line, "{jit-log-opt-loop") || strings.HasSuffix(line, "{jit-log-opt-bridge"):
			cur, pending = &pypyTrace{}, nil
			continue
		case strings.HasSuffix(line, "jit-log-opt-loop}") || strings.HasSuffix(line, "jit-log-opt-bridge}"):
			if cur != nil && len(cur.ops) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		case cur == nil:
			if m := pypyAddr.FindStringSubmatch(line); m != nil {
				end, _ := strconv.ParseUint(m[4], 16, 64)
				if m[1] != "" {
					code.ends["Loop "+m[1]] = end
				} else {
					code.ends["Guard "+m[2]] = end
				}
			} else if m := pypyDump.FindStringSubmatch(line); m != nil {
				addr, _ := strconv.ParseUint(m[1], 16, 64)
				off, _ := strconv.ParseUint(m[2], 10, 64)
				if b, err := hex.DecodeString(m[3]); err == nil {
					code.dumps = append(code.dumps, jitCode{addr: addr + off, bytes: b})
				}
			}
			continue
		}
		if strings.HasPrefix(line, "# ") && cur.header == "" {
			cur.header = line
			if m := pypyLoop.FindStringSubmatch(line); m != nil {
				cur.loop = m[1]
			}
			if m := pypyBridge.FindStringSubmatch(line); m != nil {
				cur.guard = m[1]
			}
			continue
		}
		if m := pypyEnd.FindStringSubmatch(line); m != nil {
			cur.end, _ = strconv.Atoi(m[1])
			continue
		}
		if m := pypyMergeL.FindStringSubmatch(line); m != nil {
			depth, _ := strconv.Atoi(m[1])
			where := m[3]
			op := ""
			if i := strings.LastIndex(where, " "); i >= 0 {
				op = where[i+1:]
			}
			pending = append(pending, pypyMerge{depth: depth, fn: m[2], where: filepath.Base(where), op: op})
			continue
		}
		if m := pypyOpLine.FindStringSubmatch(line); m != nil {
			off, _ := strconv.Atoi(m[1])
			cur.ops = append(cur.ops, pypyOp{off: off, text: m[2], merges: pending})
			pending = nil
		}
	}
	return out, code
}

// machine returns the trace's machine code: it ends where jit-backend-addr says, and
// starts t.end bytes before (the offsets of jit-log-opt count from there).
func (t *pypyTrace) machine(c *pypyCode) (Code, bool) {
	key := "Loop " + t.loop
	if t.loop == "" {
		key = "Guard " + t.guard
	}
	end, ok := c.ends[key]
	if !ok || t.end <= 0 || uint64(t.end) > end {
		return Code{}, false
	}
	b, ok := c.bytes(end-uint64(t.end), t.end)
	if !ok {
		return Code{}, false
	}
	notes := map[int]string{}
	for _, op := range t.ops {
		if notes[op.off] != "" {
			notes[op.off] += "; "
		}
		notes[op.off] += op.text
	}
	return Code{Bytes: b, Addr: end - uint64(t.end), Notes: notes}, true
}

// firstFunction is the function a trace starts in: its first merge point's.
func (t *pypyTrace) firstFunction() string {
	for _, op := range t.ops {
		for _, m := range op.merges {
			return m.fn
		}
	}
	return ""
}

// pypyListing turns a trace into a listing: calls marked (a call_assembler of one of the
// kernel's own loops, or a call PyPy inlined into the trace, entering the kernel's
// function again, is the recursion), labels and the jumps back to them as loop heads and
// back edges.
func pypyListing(t *pypyTrace, fn string, ownLoops map[string]bool) Listing {
	labels := map[string]int{}
	var lines []Line
	for i, op := range t.ops {
		name, _, _ := strings.Cut(op.text, "(")
		if _, after, ok := strings.Cut(name, " = "); ok {
			name = after
		}
		ln := Line{Offset: op.off, Text: op.text, Target: -1}
		var notes []string
		for _, m := range op.merges {
			notes = append(notes, fmt.Sprintf("%s%s", strings.Repeat("› ", m.depth), m.where))
		}
		switch {
		case name == "label":
			if m := pypyToken.FindStringSubmatch(op.text); m != nil {
				labels[m[1]] = op.off
			}
		case name == "jump":
			if m := pypyToken.FindStringSubmatch(op.text); m != nil {
				if at, ok := labels[m[1]]; ok {
					ln.BackEdge, ln.Target = true, at
				}
			}
		case strings.HasPrefix(name, "call_assembler"):
			ln.Call = true
			if m := pypyCallee.FindStringSubmatch(op.text); m != nil && ownLoops[m[1]] {
				ln.Recursive = true
				notes = append(notes, "the recursive call: the compiled code of "+fn+" calling itself")
			}
		case strings.HasPrefix(name, "call") || strings.HasPrefix(name, "cond_call"):
			ln.Call = true
		case name == "enter_portal_frame":
			// The next operation's merge points say which function PyPy inlined here.
			if i+1 < len(t.ops) {
				for _, m := range t.ops[i+1].merges {
					if m.fn == fn && m.depth > 0 {
						ln.Recursive = true
						notes = append(notes, "the recursive call, inlined into the trace: no call instruction")
					}
					break
				}
			}
		}
		ln.Note = strings.Join(notes, " · ")
		lines = append(lines, ln)
	}
	markLoopHeads(lines)
	return Listing{Kind: KindTrace, Lines: lines, Bytes: t.end}
}

// markLoopHeads marks the lines the back edges go to.
func markLoopHeads(lines []Line) {
	heads := map[int]bool{}
	for _, l := range lines {
		if l.BackEdge {
			heads[l.Target] = true
		}
	}
	for i := range lines {
		lines[i].LoopHead = heads[lines[i].Offset]
	}
}

// explainPyPy lists the traces PyPy's JIT compiled in the kernel's function during the
// pypy engine's warm-up: their machine code (PYPYLOG's jit-backend-dump, placed by
// jit-backend-addr), decoded by x86asm, each operation as a note on its first instruction,
// then the traces as jit-log-opt wrote them: the optimised operations PyPy turns into that
// code (each line's offset is where its machine code starts). Loops before bridges (side
// exits that became hot and were traced in turn).
func explainPyPy(ctx context.Context, r request) ([]Listing, error) {
	dir, err := os.MkdirTemp("", "wasmgap-explain-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "jit.log")
	env := append(os.Environ(), "PYPYLOG=jit-log-opt,jit-backend-addr,jit-backend-dump:"+file)
	prof, _, err := warmDriver(ctx, r, external.NewEngine(r.engine, external.Options{Env: env}))
	if err != nil {
		return nil, err
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("PyPy wrote no JIT log in the warm-up: %w", err)
	}
	defer f.Close()
	traces, code := parsePyPyLog(f)
	fn := r.k.Name
	own := map[string]bool{}
	type span struct{ lo, hi uint64 }
	var ownCode []span // the kernel's loops' machine code: a call into it is the recursion
	for _, t := range traces {
		if t.loop != "" && t.firstFunction() == fn {
			own[t.loop] = true
			if c, ok := t.machine(code); ok {
				ownCode = append(ownCode, span{c.Addr, c.Addr + uint64(len(c.Bytes))})
			}
		}
	}
	var machine, loops, bridges []Listing
	for _, t := range traces {
		if t.firstFunction() != fn {
			continue
		}
		l := pypyListing(t, fn, own)
		l.Tier = "PyPy " + strings.TrimPrefix(t.header, "# ")
		if i := strings.Index(l.Tier, " ("); i >= 0 && t.loop != "" {
			// "Loop 5 (fib_rec;…) : entry bridge with 103 ops" → "Loop 5: entry bridge with 103 ops"
			if _, rest, ok := strings.Cut(l.Tier[i:], ") :"); ok {
				l.Tier = l.Tier[:i] + ":" + rest
			}
		}
		l.Function = fn + " (kernels.py)"
		l.From = "PYPYLOG=jit-log-opt after the pypy engine's warm-up"
		summarize(&l)
		guards, allocs := 0, 0
		for _, ln := range l.Lines {
			switch {
			case strings.Contains(ln.Text, "guard_"):
				guards++
			case strings.Contains(ln.Text, "new_with_vtable(") || strings.Contains(ln.Text, "new("):
				allocs++
			}
		}
		l.Notes = append(l.Notes, fmt.Sprintf("%d operations, %d of them guards (a check that leaves the trace when it fails) and %d allocations; %d bytes of machine code",
			l.Instructions, guards, allocs, l.Bytes))
		if t.loop != "" {
			loops = append(loops, l)
		} else {
			bridges = append(bridges, l)
		}
		// The same trace as machine code, each operation beside its first instruction.
		if c, ok := t.machine(code); ok {
			c.Self = func(_ int, target uint64) bool {
				for _, s := range ownCode {
					if target >= s.lo && target < s.hi {
						return true
					}
				}
				return false
			}
			ml, err := machineListing(r.engine, strings.Replace(l.Tier, "PyPy ", "PyPy machine code of ", 1), l.Function,
				"PYPYLOG=jit-backend-dump and jit-backend-addr after the pypy engine's warm-up", c)
			if err != nil {
				return nil, err
			}
			// A call_assembler is an indirect call (mov r11, imm; call r11): its operation
			// says whether it calls one of the kernel's own loops. Its first call is that
			// one; a second goes to the helper that finishes a frame the callee left.
			op, called := "", false
			for i := range ml.Lines {
				ln := &ml.Lines[i]
				if n, ok := c.Notes[ln.Offset]; ok {
					op, called = n, false
				}
				if !ln.Call || called {
					continue
				}
				called = true
				if m := pypyCallee.FindStringSubmatch(op); m != nil && own[m[1]] && strings.Contains(op, "call_assembler") {
					ln.Recursive = true
				}
			}
			summarize(&ml)
			if l.RecursiveCalls > ml.RecursiveCalls {
				ml.Notes = append(ml.Notes, fmt.Sprintf("the trace inlined %d recursive calls of %s: they have no call instruction", l.RecursiveCalls-ml.RecursiveCalls, fn))
			}
			machine = append(machine, ml)
		}
	}
	ls := append(append(machine, loops...), bridges...)
	if len(ls) == 0 {
		return nil, fmt.Errorf("PyPy compiled no trace that starts in %s in the warm-up", fn)
	}
	prof.apply(ls)
	return ls, nil
}
