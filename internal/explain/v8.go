package explain

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/wasmgap/wasmgap/internal/capped"
	"github.com/wasmgap/wasmgap/internal/engine/external"
)

// v8Code is one function's code as V8 prints it (--print-wasm-code, --print-opt-code).
type v8Code struct {
	header    map[string]string // name, compiler, kind, index
	addr      uint64
	bytes     []byte
	notes     map[int]string // V8's annotation of the instruction at an offset
	relocs    map[int]string // relocation kinds by offset
	positions [][2]int       // pc offset, source position
}

var v8Inst = regexp.MustCompile(`^0x([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+(.*)$`)

// parseV8 reads the code blocks V8 printed.
func parseV8(r io.Reader) []*v8Code {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var out []*v8Code
	var cur *v8Code
	mode := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "--- WebAssembly code ---" || line == "--- Optimized code ---":
			cur = &v8Code{header: map[string]string{}, notes: map[int]string{}, relocs: map[int]string{}}
			mode = "header"
			continue
		case line == "--- End code ---":
			if cur != nil && len(cur.bytes) > 0 {
				out = append(out, cur)
			}
			cur, mode = nil, ""
			continue
		case cur == nil:
			continue
		case strings.HasPrefix(line, "Instructions (size"):
			mode = "code"
			continue
		case strings.HasPrefix(line, "Source positions:"):
			mode = "positions"
			continue
		case strings.HasPrefix(line, "RelocInfo"):
			mode = "reloc"
			continue
		case strings.TrimSpace(line) == "":
			if mode != "header" {
				mode = "other"
			}
			continue
		}
		switch mode {
		case "header":
			for _, sep := range []string{": ", " = "} {
				if k, v, ok := strings.Cut(line, sep); ok && !strings.Contains(k, " ") {
					cur.header[k] = strings.TrimSpace(v)
					break
				}
			}
		case "code":
			m := v8Inst.FindStringSubmatch(line)
			if m == nil || strings.HasPrefix(m[4], "jump table entry") || strings.HasPrefix(m[4], "constant") {
				mode = "other"
				continue
			}
			addr, _ := strconv.ParseUint(m[1], 16, 64)
			off, _ := strconv.ParseInt(m[2], 16, 64)
			b, err := hex.DecodeString(m[3])
			if err != nil || int(off) != len(cur.bytes) {
				mode = "other"
				continue
			}
			if off == 0 {
				cur.addr = addr
			}
			cur.bytes = append(cur.bytes, b...)
			if note := v8Note(m[4]); note != "" {
				cur.notes[int(off)] = note
			}
		case "positions":
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			pc, err1 := strconv.ParseInt(f[0], 16, 64)
			pos, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil {
				cur.positions = append(cur.positions, [2]int{int(pc), pos})
			}
		case "reloc":
			f := strings.Fields(line)
			if len(f) < 2 || !strings.HasPrefix(f[0], "0x") {
				continue
			}
			a, err := strconv.ParseUint(f[0][2:], 16, 64)
			if err == nil && a >= cur.addr {
				cur.relocs[int(a-cur.addr)] = strings.Join(f[1:], " ")
			}
		}
	}
	return out
}

// v8Note is V8's own annotation of an instruction: what follows ";;", or a trailing
// parenthesis ("(jump table)").
func v8Note(text string) string {
	if _, after, ok := strings.Cut(text, ";;"); ok {
		return strings.TrimSpace(after)
	}
	if i := strings.LastIndex(text, " ("); i >= 0 && strings.HasSuffix(text, ")") {
		return strings.TrimSpace(text[i+1:])
	}
	return ""
}

// position is the source position V8 recorded for the instruction at off: the last entry
// at or before it.
func (c *v8Code) position(off int) (int, bool) {
	best, found := -1, false
	for _, p := range c.positions {
		if p[0] <= off && p[0] >= best {
			best = p[0]
			if best >= 0 {
				found = true
			}
		}
	}
	if !found {
		return 0, false
	}
	for i := len(c.positions) - 1; i >= 0; i-- {
		if c.positions[i][0] == best {
			return c.positions[i][1], true
		}
	}
	return 0, false
}

// explainNodeWasm lists the kernel's function as V8 compiled kernels.wasm on the engine's
// tier, after a warm-up: Liftoff, TurboFan, or both for node-wasm and node-wasm-opt (the
// last code of each; node-wasm-opt's from the module after wasm-opt, as the engine runs it).
// The bytes V8 printed are decoded again by x86asm; the recursive call is the one whose
// source position is a call of the function itself in kernels.wasm.
func explainNodeWasm(ctx context.Context, r request) ([]Listing, error) {
	flags, ok := external.NodeWasmFlags(r.engine)
	if !ok {
		return nil, fmt.Errorf("%s is not a node-wasm engine", r.engine)
	}
	module, err := moduleBytes()
	how := strings.Join(slices.Concat([]string{"node"}, flags, []string{"--print-wasm-code"}), " ") + ", after the harness's warm-up in the engine's driver"
	if err == nil && r.engine == external.NodeWasmOpt {
		module, err = optimizedModule(ctx)
		how = "wasm-opt -O3, then " + how
	}
	if err != nil {
		return nil, err
	}
	names, name, note, err := hotWasmFunc(module, r.k)
	if err != nil {
		return nil, err
	}
	// The engine's own driver, printing the one function's code as V8 compiles it (on
	// stdout, the driver answering on a pipe of its own).
	printed := &capped.Buffer{Head: maxToolOutput}
	prof, _, err := warmDriver(ctx, r, external.NewEngine(r.engine, external.Options{
		RuntimeArgs: []string{"--print-wasm-code-function-index=" + strconv.Itoa(names.byName[name])},
		Stdout:      printed,
	}))
	if err != nil {
		return nil, err
	}
	out := []byte(printed.String())
	last := map[string]*v8Code{}
	var order []string
	for _, c := range parseV8(bytes.NewReader(out)) {
		if c.header["name"] != name {
			continue
		}
		tier := c.header["compiler"]
		if _, seen := last[tier]; !seen {
			order = append(order, tier)
		}
		last[tier] = c
	}
	if len(last) == 0 {
		return nil, fmt.Errorf("node printed no code for %s: V8 did not compile it in the warm-up", name)
	}
	wf, werr := decodeWasmFunc(ctx, module, name)
	// The recursive call is the one whose source position is kernels.wasm's call of the
	// function itself; its target, a slot of the module's jump table, is the same in every
	// tier of the process, so a tier without usable positions (Liftoff's) is marked by it.
	selfAt := func(c *v8Code, off int) bool {
		pos, ok := c.position(off)
		if !ok || wf == nil {
			return false
		}
		for _, l := range wf.lines {
			if l.Offset == pos {
				return l.Recursive
			}
		}
		return false
	}
	slots := map[uint64]bool{}
	for _, c := range last {
		lines, err := Disassemble(Code{Bytes: c.bytes, Addr: c.addr})
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			if l.Call && l.abs != 0 && selfAt(c, l.Offset) {
				slots[l.abs] = true
			}
		}
	}
	if len(slots) == 0 && wf != nil {
		// No tier with source positions (Liftoff alone): Liftoff compiles in one pass, in the
		// wasm's order, so its direct calls are the wasm's direct calls, in order.
		for _, c := range last {
			lines, err := Disassemble(Code{Bytes: c.bytes, Addr: c.addr})
			if err != nil {
				return nil, err
			}
			for t := range slotsByOrder(wf.lines, lines) {
				slots[t] = true
			}
		}
	}
	var ls []Listing
	for i := len(order) - 1; i >= 0; i-- { // the last tier V8 reached first
		c := last[order[i]]
		code := Code{Bytes: c.bytes, Addr: c.addr, Notes: c.notes}
		code.Self = func(off int, target uint64) bool { return slots[target] || selfAt(c, off) }
		l, err := machineListing(r.engine, "V8 "+order[i], name, how, code)
		if err != nil {
			return nil, err
		}
		if werr != nil {
			l.Notes = append(l.Notes, "recursive calls not marked: "+werr.Error())
		}
		if note != "" {
			l.Notes = append(l.Notes, note)
		}
		if want, ok := singleTier[r.engine]; ok && order[i] != want {
			l.Notes = append(l.Notes, fmt.Sprintf("V8 compiled this with %s despite the flags %s, which should keep it on %s alone", order[i], strings.Join(flags, " "), want))
		}
		if len(order) > 1 && i == len(order)-1 {
			l.Notes = append(l.Notes, fmt.Sprintf("V8 compiled this function with %s, then %s: the code it ran last is listed first", strings.Join(order[:i], ", "), order[i]))
		}
		ls = append(ls, l)
	}
	prof.apply(ls)
	return ls, nil
}

// slotsByOrder pairs the wasm function's direct calls with the machine code's first
// direct calls, in order, and returns the targets of the recursive ones: the function's
// own slot in the module's jump table. A pairing that gives one target to a recursive and
// a non-recursive call, or fewer machine calls than wasm ones, is no evidence: none.
func slotsByOrder(wasmLines, machine []Line) map[uint64]bool {
	var wasmCalls []bool // recursive or not, in order
	for _, l := range wasmLines {
		if l.Call && strings.HasPrefix(strings.TrimSpace(l.Text), "call ") {
			wasmCalls = append(wasmCalls, l.Recursive)
		}
	}
	var targets []uint64
	for _, l := range machine {
		if l.Call && l.abs != 0 {
			targets = append(targets, l.abs)
		}
	}
	if len(targets) < len(wasmCalls) {
		return nil
	}
	kind := map[uint64]bool{}
	for i, rec := range wasmCalls {
		if was, seen := kind[targets[i]]; seen && was != rec {
			return nil
		}
		kind[targets[i]] = rec
	}
	out := map[uint64]bool{}
	for t, rec := range kind {
		if rec {
			out[t] = true
		}
	}
	return out
}

// singleTier is the one V8 compiler each single-tier node-wasm engine's flags allow.
var singleTier = map[string]string{external.NodeWasmLiftoff: "Liftoff", external.NodeWasmTurbofan: "TurboFan"}

// jsName is a kernel's function name in the JavaScript and Java ports: Func with a lower
// first letter (fibRec, test1).
func jsName(fn string) string {
	r := []rune(fn)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// explainNodeJS lists the kernel's function as TurboFan optimised the JavaScript port,
// after the node-js driver's warm-up; the recursive call is the call after a load of the
// function itself (V8's note "<JSFunction name").
func explainNodeJS(ctx context.Context, r request) ([]Listing, error) {
	fn := jsName(r.k.Func)
	dir, err := os.MkdirTemp("", "wasmgap-explain-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	trace := filepath.Join(dir, "code.asm")
	flags := []string{"--print-opt-code", "--print-opt-code-filter=" + fn, "--redirect-code-traces", "--redirect-code-traces-to=" + trace}
	prof, _, err := warmDriver(ctx, r, external.NewEngine(r.engine, external.Options{RuntimeArgs: flags}))
	if err != nil {
		return nil, err
	}
	f, err := os.Open(trace)
	if err != nil {
		return nil, fmt.Errorf("TurboFan did not optimise %s in the warm-up (no code printed)", fn)
	}
	defer f.Close()
	var c *v8Code
	for _, code := range parseV8(f) {
		if code.header["name"] == fn {
			c = code
		}
	}
	if c == nil {
		return nil, fmt.Errorf("TurboFan did not optimise %s in the warm-up", fn)
	}
	code := Code{Bytes: c.bytes, Addr: c.addr, Notes: c.notes}
	selfLoaded := map[int]bool{}
	loaded := false
	for _, off := range sortedKeys(c.notes) {
		selfLoaded[off] = strings.Contains(c.notes[off], "<JSFunction "+fn+" ")
	}
	lines, _ := Disassemble(code)
	recursive := map[int]bool{}
	for _, l := range lines {
		if selfLoaded[l.Offset] {
			loaded = true
		}
		if l.Call {
			recursive[l.Offset] = loaded
			loaded = false
		}
	}
	code.Self = func(off int, _ uint64) bool { return recursive[off] }
	l, err := machineListing(r.engine, "V8 TurboFan (JavaScript)", fn, "node --print-opt-code, after a warm-up", code)
	if err != nil {
		return nil, err
	}
	ls := []Listing{l}
	prof.apply(ls)
	return ls, nil
}
