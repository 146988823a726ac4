package explain

import (
	"bufio"
	"context"
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
	pypyEnd    = regexp.MustCompile(`^\+(\d+): --end of the loop--`)
	pypyToken  = regexp.MustCompile(`descr=(TargetToken\(\d+\))`)
	pypyCallee = regexp.MustCompile(`descr=<Loop(\d+)>`)
)

// parsePyPyLog reads the traces of a PYPYLOG=jit-log-opt file.
func parsePyPyLog(r io.Reader) []*pypyTrace {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
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
			continue
		}
		if strings.HasPrefix(line, "# ") && cur.header == "" {
			cur.header = line
			if m := pypyLoop.FindStringSubmatch(line); m != nil {
				cur.loop = m[1]
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
	return out
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
// pypy engine's warm-up, as PYPYLOG=jit-log-opt wrote them: the optimised operations
// PyPy turns into machine code (each line's offset is where its machine code starts).
// Loops first, then the bridges (side exits that became hot and were traced in turn).
func explainPyPy(ctx context.Context, r request) ([]Listing, error) {
	dir, err := os.MkdirTemp("", "wasmgap-explain-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "jit.log")
	env := append(os.Environ(), "PYPYLOG=jit-log-opt:"+file)
	warm := r
	warm.opts.Profile = false // the traces' machine code has no address here to attribute samples to
	if _, err := warmDriver(ctx, warm, external.PyPy, external.Options{Env: env}); err != nil {
		return nil, err
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("PyPy wrote no JIT log in the warm-up: %w", err)
	}
	defer f.Close()
	traces := parsePyPyLog(f)
	fn := r.k.Name
	own := map[string]bool{}
	for _, t := range traces {
		if t.loop != "" && t.firstFunction() == fn {
			own[t.loop] = true
		}
	}
	var loops, bridges []Listing
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
	}
	ls := append(loops, bridges...)
	if len(ls) == 0 {
		return nil, fmt.Errorf("PyPy compiled no trace that starts in %s in the warm-up", fn)
	}
	if r.opts.Profile {
		refuseProfile(ls, "no profile for pypy: jit-log-opt gives its traces' operations, not the addresses of their machine code")
	}
	return ls, nil
}
