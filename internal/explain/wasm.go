package explain

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/wasmgap/wasmgap/internal/childproc"
	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/wasm"
)

// wasmFunc is one function of a module as wasm-objdump decodes it.
type wasmFunc struct {
	name  string // as the name section spells it
	index int    // in the function index space (imports first)
	lines []Line // offsets from the function's start, as V8's source positions count
}

// goWasmName is the name the Go toolchain gives a kernel's function in kernels.wasm.
func goWasmName(k *kernels.Kernel) string {
	return "github.com_wasmgap_wasmgap_kernels." + k.Func
}

// hotWasmFunc names the function of module that runs the kernel: its own (FibRec), or,
// when the Go compiler inlined it into its export's function (FibIt into main.fibIt),
// that one, with a note saying so.
func hotWasmFunc(module []byte, k *kernels.Kernel) (names *wasmNames, name, note string, err error) {
	names, err = readWasmNames(module)
	if err != nil {
		return nil, "", "", fmt.Errorf("kernels.wasm: %w", err)
	}
	name = goWasmName(k)
	if _, ok := names.byName[name]; ok {
		return names, name, "", nil
	}
	parts := strings.Split(k.Export, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	export := "main." + strings.Join(parts, "")
	if _, ok := names.byName[export]; ok {
		return names, export, fmt.Sprintf("the Go compiler inlined kernels.%s into %s, the function of the export %s", k.Func, export, k.Export), nil
	}
	return nil, "", "", fmt.Errorf("kernels.wasm has neither %s nor %s (the export %s's function)", name, export, k.Export)
}

// moduleBytes is the kernels.wasm to explain.
func moduleBytes() ([]byte, error) {
	b, err := wasm.Embedded()
	if err != nil {
		return nil, fmt.Errorf("kernels.wasm: %w", err)
	}
	return b, nil
}

var wasmFuncs sync.Map // [sha256 + name] -> *wasmFunc

// decodeWasmFunc returns the named function of module, decoded by wabt's wasm-objdump
// (one run per module and function in this process).
func decodeWasmFunc(ctx context.Context, module []byte, name string) (*wasmFunc, error) {
	sum := sha256.Sum256(module)
	key := hex.EncodeToString(sum[:]) + name
	if f, ok := wasmFuncs.Load(key); ok {
		return f.(*wasmFunc), nil
	}
	objdump, err := exec.LookPath("wasm-objdump")
	if err != nil {
		return nil, fmt.Errorf("wasm-objdump %w (apt-get install wabt)", errNoTool)
	}
	dir, err := os.MkdirTemp("", "wasmgap-explain-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "kernels.wasm")
	if err := os.WriteFile(path, module, 0o600); err != nil {
		return nil, err
	}
	cmd := childproc.Command(ctx, objdump, "-d", path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := childproc.Start(cmd); err != nil {
		return nil, fmt.Errorf("wasm-objdump: %w", err)
	}
	f := parseObjdump(bufio.NewScanner(out), name)
	_ = childproc.KillGroup(cmd) // the function found, the rest is not needed
	_ = cmd.Wait()
	if f == nil {
		return nil, fmt.Errorf("wasm-objdump found no function %s in kernels.wasm%s", name, firstLineOf(stderr.String()))
	}
	wasmFuncs.Store(key, f)
	return f, nil
}

func firstLineOf(s string) string {
	if s = strings.TrimSpace(s); s == "" {
		return ""
	}
	line, _, _ := strings.Cut(s, "\n")
	return ": " + line
}

// parseObjdump reads wasm-objdump -d's output up to the end of the function named name:
// its lines are " <addr>: <bytes> | <instruction>" after a header
// "<addr> func[<index>] <<name>>:".
func parseObjdump(sc *bufio.Scanner, name string) *wasmFunc {
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	header := "] <" + name + ">:"
	var f *wasmFunc
	var start uint64
	type block struct {
		loop bool
		off  int
	}
	var stack []block
	for sc.Scan() {
		line := sc.Text()
		if f == nil {
			if !strings.HasSuffix(line, header) {
				continue
			}
			addr, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
			a, err := strconv.ParseUint(addr, 16, 64)
			idx, err2 := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(rest, "]", 2)[0], "func["), "]"))
			if err != nil || err2 != nil {
				continue
			}
			f, start = &wasmFunc{name: name, index: idx}, a
			continue
		}
		addrPart, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.Contains(rest, "|") {
			break // the next function's header or a blank line: this one has ended
		}
		a, err := strconv.ParseUint(strings.TrimSpace(addrPart), 16, 64)
		if err != nil {
			break
		}
		bytesPart, text, _ := strings.Cut(rest, "|")
		text = strings.TrimRight(text, " ")
		op := strings.Fields(text)
		if len(op) == 0 {
			continue
		}
		l := Line{Offset: int(a - start), Hex: strings.ReplaceAll(strings.TrimSpace(bytesPart), " ", ""), Text: strings.TrimPrefix(text, " "), Target: -1}
		switch op[0] {
		case "local[0]", "local[1]", "local[2]", "local[3]":
		case "block", "if", "try":
			stack = append(stack, block{off: l.Offset})
		case "loop":
			stack = append(stack, block{loop: true, off: l.Offset})
		case "end":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case "br", "br_if", "br_table":
			for _, d := range op[1:] {
				n, err := strconv.Atoi(d)
				if err != nil || n >= len(stack) {
					continue
				}
				if b := stack[len(stack)-1-n]; b.loop {
					l.BackEdge, l.Target = true, b.off
				}
			}
		case "call", "call_indirect", "return_call", "return_call_indirect":
			l.Call = true
			l.Recursive = strings.HasSuffix(text, "<"+name+">")
		}
		f.lines = append(f.lines, l)
	}
	if f == nil {
		return nil
	}
	heads := map[int]bool{}
	for _, l := range f.lines {
		if l.BackEdge {
			heads[l.Target] = true
		}
	}
	for i := range f.lines {
		f.lines[i].LoopHead = heads[f.lines[i].Offset]
	}
	return f
}

// explainWasm lists the kernel's function in kernels.wasm, the code every wasm engine
// starts from.
func explainWasm(ctx context.Context, r request) ([]Listing, error) {
	module, err := moduleBytes()
	if err != nil {
		return nil, err
	}
	l, err := hotWasmListing(ctx, module, r.k, "wasm")
	if err != nil {
		return nil, err
	}
	return []Listing{l}, nil
}

// hotWasmListing decodes the function of module that runs k (hotWasmFunc) as a listing
// of tier.
func hotWasmListing(ctx context.Context, module []byte, k *kernels.Kernel, tier string) (Listing, error) {
	_, name, note, err := hotWasmFunc(module, k)
	if err != nil {
		return Listing{}, err
	}
	f, err := decodeWasmFunc(ctx, module, name)
	if err != nil {
		return Listing{}, err
	}
	return wasmListing(f, tier, note), nil
}

// noWasmLines says why kernels.wasm's instructions carry no Go line: Go writes no DWARF
// into it, and its own pc table (in the module's data, for the runtime's tracebacks) maps
// a function's resumption blocks, each many instructions, not the instructions.
const noWasmLines = "no line table for this tier: Go writes no DWARF into kernels.wasm, and its own pc table maps resumption blocks (many instructions each), not instructions"

// wasmListing is a decoded wasm function as a listing of tier.
func wasmListing(f *wasmFunc, tier, note string) Listing {
	l := Listing{Tier: tier, Kind: KindWasm, Function: fmt.Sprintf("%s (func %d)", f.name, f.index),
		From: "kernels.wasm, decoded by wasm-objdump -d", Lines: f.lines, NoLines: noWasmLines}
	if note != "" {
		l.Notes = append(l.Notes, note)
	}
	locals := 0
	for _, ln := range f.lines {
		if strings.HasPrefix(ln.Text, "local[") {
			locals++ // the locals' declarations are no instructions
			continue
		}
		l.Bytes += len(ln.Hex) / 2
	}
	summarize(&l)
	l.Instructions -= locals
	return l
}
