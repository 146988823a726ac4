package explain

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/wasmgap/wasmgap/internal/engine/external"
)

// jitCode is one JIT_CODE_LOAD record of a jitdump file (perf's format for a JIT's code:
// its name, its address and its bytes).
type jitCode struct {
	name  string
	addr  uint64
	bytes []byte
}

// jitdumpMagic starts a jitdump file, in the writer's byte order ("JiTD").
const jitdumpMagic = 0x4A695444

// parseJitdump reads the code records of a jitdump file written on this machine.
func parseJitdump(b []byte) ([]jitCode, error) {
	if len(b) < 40 {
		return nil, errors.New("jitdump: shorter than its header")
	}
	le := binary.LittleEndian
	var order binary.ByteOrder = le
	switch {
	case le.Uint32(b) == jitdumpMagic:
	case binary.BigEndian.Uint32(b) == jitdumpMagic:
		order = binary.BigEndian
	default:
		return nil, fmt.Errorf("jitdump: magic %#x, want %#x", le.Uint32(b), jitdumpMagic)
	}
	off := int(order.Uint32(b[8:]))
	if off < 40 || off > len(b) {
		return nil, fmt.Errorf("jitdump: header size %d", off)
	}
	var out []jitCode
	for off+16 <= len(b) {
		id, size := order.Uint32(b[off:]), int(order.Uint32(b[off+4:]))
		if size < 16 || off+size > len(b) {
			break // the last record, cut short by the writer's end
		}
		rec := b[off+16 : off+size]
		off += size
		if id != 0 || len(rec) < 40 { // 0: JIT_CODE_LOAD
			continue
		}
		codeAddr, codeSize := order.Uint64(rec[16:]), order.Uint64(rec[24:])
		name, rest, ok := bytes.Cut(rec[40:], []byte{0})
		if !ok || uint64(len(rest)) < codeSize {
			continue
		}
		out = append(out, jitCode{name: string(name), addr: codeAddr, bytes: rest[:codeSize]})
	}
	return out, nil
}

var (
	// "TRACE-3$fib_rec$28": PHP's name for a trace, the function and its first line.
	phpTraceName = regexp.MustCompile(`^TRACE-(\d+)\$([^$]*)\$(\d+)$`)
	// "---- TRACE 1 start (enter) fib_rec() /…/kernels.php:28", "---- TRACE 1 stop (recursive call)"
	phpTraceEvent = regexp.MustCompile(`^---- TRACE (\d+) (start|stop|compiled)\s*(?:\(([^)]*)\))?`)
	// A traced opcode: "0004 INIT_FCALL 1 144 string("fib_rec")", indented by call depth.
	phpTraceOp = regexp.MustCompile(`^\d{4}\s+(?:[TVC]V?\d+(?:\([^)]*\))? = )?([A-Z_]+)`)
)

// phpTraceInfo is what PHP said about a trace on stderr (opcache.jit_debug): how it
// started and stopped, and the opcodes it recorded.
type phpTraceInfo struct {
	start, stop string
	ops         []string
}

// parsePHPTraces reads opcache.jit_debug's trace events; a trace number PHP reused
// (after an abort) keeps what its compiled trace said.
func parsePHPTraces(stderr []byte) map[string]*phpTraceInfo {
	out := map[string]*phpTraceInfo{}
	var cur *phpTraceInfo
	var curN string
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := phpTraceEvent.FindStringSubmatch(line); m != nil {
			switch m[2] {
			case "start":
				cur, curN = &phpTraceInfo{start: m[3]}, m[1]
			case "stop":
				if cur != nil && curN == m[1] {
					cur.stop = m[3]
				}
			case "compiled":
				if cur != nil && curN == m[1] {
					out[curN] = cur
				}
				cur = nil
			}
			continue
		}
		if cur != nil {
			if m := phpTraceOp.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
				cur.ops = append(cur.ops, m[1])
			}
		}
	}
	return out
}

// The bits of opcache.jit_debug explain sets: a jitdump file of the compiled code
// (ZEND_JIT_DEBUG_PERF_DUMP), and each trace's start, stop, compilation and opcodes on
// stderr (ZEND_JIT_DEBUG_TRACE_START, _STOP, _COMPILED, _BYTECODE).
const phpJITDebug = 1<<5 | 1<<12 | 1<<13 | 1<<14 | 1<<18

// markPHPRecursion marks a trace's recursive calls: a jump into a trace that enters the
// function (entries), and, in a trace that stopped at a recursive call (selfLinked), the
// back edge that goes furthest back, to the trace's own start after its counter.
func markPHPRecursion(l *Listing, selfLinked bool, entries map[uint64]string) {
	back := -1
	for i := range l.Lines {
		ln := &l.Lines[i]
		if n, ok := entries[ln.abs]; ok && ln.jump && ln.abs != l.Addr {
			ln.Recursive, ln.Call = true, true
			ln.Note = "the recursive call: a jump into trace " + n + ", where the function is entered"
		}
		if selfLinked && ln.BackEdge && (back < 0 || ln.Target <= l.Lines[back].Target) {
			back = i
		}
	}
	if back >= 0 {
		ln := &l.Lines[back]
		ln.Recursive, ln.Call = true, true
		ln.Note = "the recursive call: the trace stopped at it and links back to its own start"
	}
	summarize(l)
}

// explainPHPJIT lists the traces opcache's tracing JIT compiled in the kernel's function
// during the php-jit engine's warm-up: their machine code from the jitdump file PHP writes
// (/tmp/jit-<pid>.dump, opcache.jit_debug), decoded by x86asm, with how each trace
// started and stopped and the PHP opcodes it covers. A trace that stopped at a recursive
// call links back to its own start: that jump is the recursion.
func explainPHPJIT(ctx context.Context, r request) ([]Listing, error) {
	var stderr bytes.Buffer
	prof, pid, err := warmDriver(ctx, r, external.NewEngine(r.engine, external.Options{
		RuntimeArgs: []string{"-d", "opcache.jit_debug=" + strconv.Itoa(phpJITDebug)}, Stderr: &stderr}))
	dump := "/tmp/jit-" + strconv.Itoa(pid) + ".dump"
	if pid != 0 {
		defer os.Remove(dump)
	}
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(dump)
	if err != nil {
		return nil, fmt.Errorf("PHP wrote no jitdump of its JIT's code: %w", err)
	}
	codes, err := parseJitdump(b)
	if err != nil {
		return nil, err
	}
	info := parsePHPTraces(stderr.Bytes())
	// The traces that start where the function is entered: a jump to one is a call of it.
	entries := map[uint64]string{}
	for _, c := range codes {
		if m := phpTraceName.FindStringSubmatch(c.name); m != nil && m[2] == r.k.Name && info[m[1]] != nil && info[m[1]].start == "enter" {
			entries[c.addr] = m[1]
		}
	}
	var ls []Listing
	for _, c := range codes {
		m := phpTraceName.FindStringSubmatch(c.name)
		if m == nil || m[2] != r.k.Name {
			continue
		}
		ti := info[m[1]]
		tier := "PHP JIT trace " + m[1]
		recursive := false
		if ti != nil {
			tier += " (" + ti.start + "; stopped at " + ti.stop + ")"
			recursive = ti.stop == "recursive call"
		}
		l, err := machineListing(r.engine, tier, r.k.Name+" at kernels.php:"+m[3],
			"the jitdump of opcache.jit_debug after the php-jit engine's warm-up", Code{Bytes: c.bytes, Addr: c.addr})
		if err != nil {
			return nil, err
		}
		markPHPRecursion(&l, recursive, entries)
		if ti != nil && len(ti.ops) > 0 {
			l.Notes = append(l.Notes, fmt.Sprintf("the trace covers %d PHP opcodes: %s", len(ti.ops), strings.Join(ti.ops, " ")))
		}
		ls = append(ls, l)
	}
	if len(ls) == 0 {
		return nil, fmt.Errorf("opcache's JIT compiled no trace in %s in the warm-up", r.k.Name)
	}
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].RecursiveCalls > 0 && ls[j].RecursiveCalls == 0 })
	prof.apply(ls)
	return ls, nil
}
