package explain

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
)

func TestDisassembleMarks(t *testing.T) {
	tests := []struct {
		name                      string
		code                      []byte
		insts, calls, self, backs int
		loopHead                  int // offset, -1 for none
	}{
		{
			// push rbp; call <self>; pop rbp; ret
			name: "recursive call", code: []byte{0x55, 0xe8, 0xfa, 0xff, 0xff, 0xff, 0x5d, 0xc3},
			insts: 4, calls: 1, self: 1, backs: 0, loopHead: -1,
		},
		{
			// xor eax, eax; inc eax; cmp eax, 10; jl -7 (to inc); ret
			name: "loop", code: []byte{0x31, 0xc0, 0xff, 0xc0, 0x83, 0xf8, 0x0a, 0x7c, 0xf9, 0xc3},
			insts: 5, calls: 0, self: 0, backs: 1, loopHead: 2,
		},
		{
			// call +0x100 (another function); ret
			name: "other call", code: []byte{0xe8, 0x00, 0x01, 0x00, 0x00, 0xc3},
			insts: 2, calls: 1, self: 0, backs: 0, loopHead: -1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := machineListing("test", "test", "f", "bytes", Code{Bytes: tt.code, Addr: 0x1000, Arch: "amd64"})
			if err != nil {
				t.Fatal(err)
			}
			if l.Instructions != tt.insts || l.Calls != tt.calls || l.RecursiveCalls != tt.self || l.BackEdges != tt.backs {
				t.Errorf("got %d instructions, %d calls, %d recursive, %d back edges; want %d, %d, %d, %d\n%s",
					l.Instructions, l.Calls, l.RecursiveCalls, l.BackEdges, tt.insts, tt.calls, tt.self, tt.backs, dump(l))
			}
			for _, ln := range l.Lines {
				if ln.LoopHead != (ln.Offset == tt.loopHead) {
					t.Errorf("line +%#x: loop head %v, want the head at %d\n%s", ln.Offset, ln.LoopHead, tt.loopHead, dump(l))
				}
			}
			if l.Bytes != len(tt.code) {
				t.Errorf("bytes %d, want %d", l.Bytes, len(tt.code))
			}
		})
	}
}

func TestDisassembleJumpTableIsData(t *testing.T) {
	// lea rsi, [rip+6]; add rsi, [rsi+8*rcx]; jmp rsi; then two entries (0x10, 0x11) and ret at table+0x10.
	code := []byte{0x48, 0x8d, 0x35, 0x06, 0x00, 0x00, 0x00, 0x48, 0x03, 0x34, 0xce, 0xff, 0xe6}
	code = binary.LittleEndian.AppendUint64(code, 0x10)
	code = binary.LittleEndian.AppendUint64(code, 0x11)
	code = append(code, 0xc3, 0xc3)
	l, err := machineListing("test", "test", "f", "bytes", Code{Bytes: code, Arch: "amd64"})
	if err != nil {
		t.Fatal(err)
	}
	data := 0
	for _, ln := range l.Lines {
		if ln.Data {
			data++
		}
	}
	if data != 2 || l.Instructions != 5 {
		t.Errorf("got %d data lines and %d instructions, want 2 and 5\n%s", data, l.Instructions, dump(l))
	}
}

func dump(l Listing) string {
	var b strings.Builder
	for _, ln := range l.Lines {
		b.WriteString(textLine(l, ln) + "\n")
	}
	return b.String()
}

func TestNativeListsTheRecursiveCall(t *testing.T) {
	k, err := kernels.Lookup("fib_rec")
	if err != nil {
		t.Fatal(err)
	}
	ls, err := explainNative(context.Background(), request{engine: "native", k: k, args: []int{20}})
	if err != nil {
		t.Fatal(err)
	}
	l := ls[0]
	if l.RecursiveCalls < 1 || l.Instructions < 10 {
		t.Fatalf("got %d instructions, %d recursive calls; want at least 10 and 1\n%s", l.Instructions, l.RecursiveCalls, dump(l))
	}
	// FibRec compares n with 3 (n < 3): the constant is in its code.
	found := false
	for _, ln := range l.Lines {
		if strings.HasPrefix(ln.Text, "cmp ") && strings.HasSuffix(ln.Text, ", 0x3") {
			found = true
		}
	}
	if !found {
		t.Errorf("no cmp with 0x3 in FibRec's code\n%s", dump(l))
	}
}

// TestNativeListsAnInlinedKernel: gc inlines FibIt into the catalogue's call of it; the
// listing is that caller's code, its loop's back edge among the kernel's lines, and every
// instruction carries its Go line.
func TestNativeListsAnInlinedKernel(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	ls, err := explainNative(context.Background(), request{engine: engine.Native, k: k, args: []int{40}})
	if err != nil {
		t.Fatal(err)
	}
	l := ls[0]
	if l.Instructions < 5 || l.BackEdges < 1 {
		t.Fatalf("%d instructions, %d back edges; want at least 5 and 1\n%s", l.Instructions, l.BackEdges, dump(l))
	}
	// The code this process runs, found in its file with or without symbols (go test's
	// binary has none): the catalogue's call of the kernel starts where the listing does.
	if entry := uint64(reflect.ValueOf(k.Call).Pointer()); l.Addr != entry {
		t.Errorf("the listing starts at %#x, the catalogue's call of FibIt at %#x", l.Addr, entry)
	}
	for _, ln := range l.Lines {
		if ln.SourceLine <= 0 || ln.SourceFile == "" {
			t.Errorf("%+v has no Go line", ln)
		}
		if ln.BackEdge && ln.SourceFile != "kernels/recursion.go" {
			t.Errorf("the back edge %+v is not on FibIt's lines (kernels/recursion.go)", ln)
		}
	}
}

func TestELFFunctionOfAKnownFunction(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed")
	}
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("no decoder for " + runtime.GOARCH)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "f.c")
	// -O0 keeps both recursive calls; 0x2a is a constant only f compares with.
	if err := os.WriteFile(src, []byte("long f(long n) { if (n < 0x2a) return n; return f(n - 1) + f(n - 2); }\nint main(void) { return (int) f(3); }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "f")
	if out, err := exec.Command(gcc, "-O0", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	c, sym, err := elfFunction(bin, "f", true)
	if err != nil {
		t.Fatal(err)
	}
	l, err := machineListing("c", "gcc -O0", sym, bin, c)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ln := range l.Lines {
		found = found || strings.Contains(ln.Text, "0x29") || strings.Contains(ln.Text, "0x2a")
	}
	if !found || l.RecursiveCalls != 2 || l.Bytes != len(c.Bytes) {
		t.Errorf("constant found %v, %d recursive calls, %d bytes; want true, 2, %d\n%s", found, l.RecursiveCalls, l.Bytes, len(c.Bytes), dump(l))
	}
	if _, _, err := elfFunction(bin, "no_such_function", true); err == nil {
		t.Error("a missing function: no error")
	}
}

func TestSourceMarksRecursionAndLoops(t *testing.T) {
	for _, tt := range []struct {
		kernel      string
		self, loops int
	}{{"fib_rec", 1, 0}, {"fib_it", 0, 1}, {"ack_while", 1, 1}} {
		k, err := kernels.Lookup(tt.kernel)
		if err != nil {
			t.Fatal(err)
		}
		ls, err := explainSource(context.Background(), request{k: k})
		if err != nil {
			t.Fatal(err)
		}
		heads := 0
		for _, ln := range ls[0].Lines {
			if ln.LoopHead {
				heads++
			}
		}
		if ls[0].RecursiveCalls != tt.self || heads != tt.loops || ls[0].BackEdges != tt.loops {
			t.Errorf("%s: %d recursive lines, %d loop heads, %d back edges; want %d, %d, %d", tt.kernel,
				ls[0].RecursiveCalls, heads, ls[0].BackEdges, tt.self, tt.loops, tt.loops)
		}
	}
}

func TestParseObjdump(t *testing.T) {
	out := `
000100 func[7] <other>:
 000101: 0b                         | end
000200 func[8] <f>:
 000201: 01 7f                      | local[0] type=i32
 000203: 03 40                      | loop
 000205: 20 00                      |   local.get 0
 000207: 10 08                      |   call 8 <f>
 000209: 0d 00                      |   br_if 0
 00020b: 10 07                      |   call 7 <other>
 00020d: 0b                         | end
 00020e: 0b                         | end
000300 func[9] <next>:
 000301: 0b                         | end
`
	f := parseObjdump(bufio.NewScanner(strings.NewReader(out)), "f")
	if f == nil || f.index != 8 {
		t.Fatalf("function f not found: %+v", f)
	}
	if len(f.lines) != 8 {
		t.Fatalf("got %d lines, want 8 (f's alone)", len(f.lines))
	}
	want := map[int]string{3: "loop head", 7: "recursive", 9: "back edge", 11: "call"}
	for _, ln := range f.lines {
		got := ""
		switch {
		case ln.LoopHead:
			got = "loop head"
		case ln.Recursive:
			got = "recursive"
		case ln.BackEdge:
			got = "back edge"
		case ln.Call:
			got = "call"
		}
		if got != want[ln.Offset] {
			t.Errorf("offset %d (%s): %q, want %q", ln.Offset, ln.Text, got, want[ln.Offset])
		}
	}
	if f.lines[4].Target != 3 {
		t.Errorf("br_if 0 goes to %d, want the loop at 3", f.lines[4].Target)
	}
}

func TestReadWazeroCache(t *testing.T) {
	var b bytes.Buffer
	b.Write(wazeroCacheMagic)
	b.WriteByte(7)
	b.WriteString("v1.12.0")
	b.Write(binary.LittleEndian.AppendUint32(nil, 2))
	b.Write(binary.LittleEndian.AppendUint64(nil, 0))
	b.Write(binary.LittleEndian.AppendUint64(nil, 16))
	exe := append([]byte{0x55, 0xc3}, make([]byte, 14)...) // function 0, padded to 16
	exe = append(exe, 0x90, 0xc3)                          // function 1
	b.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(exe))))
	b.Write(exe)
	c, err := readWazeroCache(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	f0, err := c.function(0)
	if err != nil || !bytes.Equal(f0, []byte{0x55, 0xc3}) {
		t.Errorf("function 0 = %x, %v; want 55c3 without its padding", f0, err)
	}
	f1, err := c.function(1)
	if err != nil || !bytes.Equal(f1, []byte{0x90, 0xc3}) {
		t.Errorf("function 1 = %x, %v; want 90c3", f1, err)
	}
	if _, err := c.function(2); err == nil {
		t.Error("function 2 of 2: no error")
	}
	if _, err := readWazeroCache([]byte("WAZEVO\x07v1")); err == nil {
		t.Error("a cut entry: no error")
	}
}

func TestParseV8(t *testing.T) {
	f, err := os.Open("testdata/v8-wasm-fibrec.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cs := parseV8(f)
	if len(cs) != 1 {
		t.Fatalf("got %d code blocks, want 1", len(cs))
	}
	c := cs[0]
	if c.header["name"] != "github.com_wasmgap_wasmgap_kernels.FibRec" || c.header["compiler"] != "TurboFan" {
		t.Errorf("header %v", c.header)
	}
	// The bytes up to the jump table V8 prints as data: 0x260 of its 656.
	if len(c.bytes) != 0x260 {
		t.Errorf("got %d bytes, want %d", len(c.bytes), 0x260)
	}
	// The two recursive calls sit at kernels.wasm's call instructions (body offsets 177 and 241).
	for off, want := range map[int]int{0x11a: 177, 0x167: 241} {
		if pos, ok := c.position(off); !ok || pos != want {
			t.Errorf("position of +%#x = %d, %v; want %d", off, pos, ok, want)
		}
	}
	l, err := machineListing("node-wasm-turbofan", "V8 TurboFan", "FibRec", "test", Code{Bytes: c.bytes, Addr: c.addr, Arch: "amd64",
		Self: func(off int, _ uint64) bool { p, _ := c.position(off); return p == 177 || p == 241 }})
	if err != nil {
		t.Fatal(err)
	}
	if l.RecursiveCalls != 2 || l.Instructions < 10 {
		t.Errorf("%d recursive calls in %d instructions, want 2 in at least 10", l.RecursiveCalls, l.Instructions)
	}
}

func TestParseHotSpot(t *testing.T) {
	f, err := os.Open("testdata/hotspot-c2-fibrec.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cs := parseHotSpot(f)
	if len(cs) != 1 || cs[0].tier != "c2" || cs[0].method != "Kernels::fibRec" {
		t.Fatalf("got %d compilations (%+v), want C2's of Kernels::fibRec", len(cs), cs)
	}
	ls, err := hotspotListings("java", map[string]*hotspotCode{"c2": cs[0]}, "Kernels::fibRec", "fibRec")
	if err != nil {
		t.Fatal(err)
	}
	l := ls[0]
	if l.Bytes != 256 || l.RecursiveCalls != 4 || l.Instructions < 10 {
		t.Errorf("%d bytes, %d instructions, %d recursive calls; want 256 bytes, at least 10 instructions, 4 recursive calls (C2 inlined one level)\n%s",
			l.Bytes, l.Instructions, l.RecursiveCalls, dump(l))
	}
}

// TestEveryEngineExplainedOrRefused: every engine of engine.Order (each registered engine
// and the page's) has an explainer or a stated reason for none, and a new engine with
// neither is named.
func TestEveryEngineExplainedOrRefused(t *testing.T) {
	for _, p := range uncovered(engine.Order) {
		t.Error(p)
	}
	for _, n := range slices.Concat(engine.Names(), engine.PageNames()) {
		if _, has := explainers[n]; !has && unexplained[n] == "" {
			t.Errorf("registered engine %s has no explainer and no reason", n)
		}
	}
	withNew := append(slices.Clone(engine.Order), engine.Grouping{Group: engine.GroupOther, Engines: []string{"new-engine"}})
	if got := uncovered(withNew); len(got) != 1 || !strings.HasPrefix(got[0], "new-engine has no explainer") {
		t.Errorf("an engine with neither: %q, want it named", got)
	}
}

// TestEnginesInRegistryOrder: Engines lists the baseline, the forms, the compiled tiers in
// engine.Order's order, then the interpreters, each once.
func TestEnginesInRegistryOrder(t *testing.T) {
	got := Engines()
	if len(got) != len(explainers) || got[0] != engine.Native || got[1] != Source || got[2] != Wasm {
		t.Fatalf("Engines() = %v, want native, source, wasm first and each of %d once", got, len(explainers))
	}
	var order []string
	for _, g := range engine.Order {
		order = append(order, g.Engines...)
	}
	rank := func(n string) int { return slices.Index(order, n) }
	for i := 4; i < len(got); i++ {
		a, b := explainers[got[i-1]], explainers[got[i]]
		if a.interprets == b.interprets && rank(got[i-1]) > rank(got[i]) || a.interprets && !b.interprets {
			t.Errorf("%s before %s: want the compiled tiers, then the interpreters, each in engine.Order", got[i-1], got[i])
		}
	}
}

func TestExplainRefusesPerEngine(t *testing.T) {
	k, _ := kernels.Lookup("fib_rec")
	if _, err := Explain(context.Background(), k, []int{20}, []string{"nope"}, Options{}); err == nil {
		t.Error("an unknown engine: no error")
	}
	if _, err := Explain(context.Background(), k, []int{20}, []string{engine.Wasmtime}, Options{}); err == nil || !strings.Contains(err.Error(), "Cranelift") {
		t.Errorf("an engine explain has no explainer for: %v, want its reason", err)
	}
	if _, err := Explain(context.Background(), k, []int{200}, []string{"native"}, Options{}); err == nil {
		t.Error("n = 200: no error")
	}
	t.Setenv("PATH", t.TempDir()) // no node, no wasm-objdump
	rep, err := Explain(context.Background(), k, []int{20}, []string{"node-js", "source"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Engines[0].Refused == "" || len(rep.Engines[0].Listings) != 0 {
		t.Errorf("node-js without node: %+v, want a refusal", rep.Engines[0])
	}
	if rep.Engines[1].Refused != "" || len(rep.Engines[1].Listings) != 1 {
		t.Errorf("source: %+v, want its listing", rep.Engines[1])
	}
}

func TestPythonBytecodeAndOpsPerCall(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	k, _ := kernels.Lookup("fib_rec")
	ls, err := explainPython(context.Background(), request{engine: "python", k: k, args: []int{10}})
	if err != nil {
		t.Fatal(err)
	}
	l := ls[0]
	// fib_rec(10) makes 109 calls; each runs the same handful of bytecodes.
	if l.Kind != KindBytecode || l.RecursiveCalls != 2 || l.OpsPerCall < 3 || l.OpsPerCall > float64(l.Instructions) {
		t.Errorf("kind %s, %d recursive calls, %.1f instructions a call of %d; want bytecode, 2, and between 3 and all\n%s",
			l.Kind, l.RecursiveCalls, l.OpsPerCall, l.Instructions, dump(l))
	}
}

// uncovered lists the engines of order with neither an explainer nor a stated reason for
// having none, or with both, and the names of explainers and unexplained that order
// lacks (the forms aside): what a test holds at none.
func uncovered(order []engine.Grouping) []string {
	var problems []string
	listed := map[string]bool{Source: true, Wasm: true}
	for _, g := range order {
		for _, n := range g.Engines {
			listed[n] = true
			_, has := explainers[n]
			_, why := unexplained[n]
			switch {
			case has && why:
				problems = append(problems, n+" has an explainer and a reason for none: keep one")
			case !has && !why:
				problems = append(problems, n+" has no explainer and no reason for none: add it to explainers, or say why in unexplained (internal/explain/explain.go)")
			}
		}
	}
	for _, m := range []map[string]string{names(explainers), unexplained} {
		for n := range m {
			if !listed[n] {
				problems = append(problems, n+" is no engine of engine.Order")
			}
		}
	}
	slices.Sort(problems)
	return problems
}

// names is explainers' keys as a set.
func names(m map[string]explainer) map[string]string {
	out := make(map[string]string, len(m))
	for n := range m {
		out[n] = n
	}
	return out
}
