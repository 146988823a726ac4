package explain

import (
	"context"
	"encoding/binary"
	"os/exec"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/kernels"
)

// jitdumpFile writes a jitdump file as perf's format has it: a 40-byte header, then one
// JIT_CODE_LOAD record per code.
func jitdumpFile(codes []jitCode) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, jitdumpMagic)
	b = le.AppendUint32(b, 1)  // version
	b = le.AppendUint32(b, 40) // header size
	b = le.AppendUint32(b, 62) // EM_X86_64
	b = append(b, make([]byte, 24)...)
	for _, c := range codes {
		size := 16 + 40 + len(c.name) + 1 + len(c.bytes)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, uint32(size))
		b = le.AppendUint64(b, 0)                    // timestamp
		b = le.AppendUint32(b, 1)                    // pid
		b = le.AppendUint32(b, 1)                    // tid
		b = le.AppendUint64(b, c.addr)               // vma
		b = le.AppendUint64(b, c.addr)               // code address
		b = le.AppendUint64(b, uint64(len(c.bytes))) // code size
		b = le.AppendUint64(b, 0)                    // code index
		b = append(append(b, c.name...), 0)
		b = append(b, c.bytes...)
	}
	return b
}

func TestParseJitdump(t *testing.T) {
	// Trace 1 enters fib_rec and jumps back to its start; trace 5 jumps into trace 1.
	codes := []jitCode{
		{name: "TRACE-1$fib_rec$28", addr: 0x1000, bytes: []byte{0x90, 0x90, 0xeb, 0xfc}},             // nop; nop; jmp +0x0
		{name: "JIT$$trace_exit", addr: 0x2000, bytes: []byte{0xc3}},                                  // ret
		{name: "TRACE-5$fib_rec$30", addr: 0x3000, bytes: []byte{0x90, 0xe9, 0xfa, 0xdf, 0xff, 0xff}}, // nop; jmp 0x1000
	}
	got, err := parseJitdump(append(jitdumpFile(codes), 1, 2, 3)) // a cut-short record at the end
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[2].name != codes[2].name || got[2].addr != 0x3000 || len(got[2].bytes) != 6 {
		t.Fatalf("got %+v, want the three codes", got)
	}
	entries := map[uint64]string{0x1000: "1"}
	l, err := machineListing("php-jit", "t5", "fib_rec", "test", Code{Bytes: got[2].bytes, Addr: got[2].addr})
	if err != nil {
		t.Fatal(err)
	}
	markPHPRecursion(&l, false, entries)
	if l.RecursiveCalls != 1 {
		t.Errorf("a jump into the entry trace: %d recursive calls, want 1\n%s", l.RecursiveCalls, dump(l))
	}
	if _, err := parseJitdump([]byte("not a jitdump file at all, but long enough for a header")); err == nil {
		t.Error("a file without the magic: no error")
	}
}

func TestParsePHPTraces(t *testing.T) {
	stderr := "---- TRACE 1 start (enter) fib_rec() /x/kernels.php:28\n---- TRACE 1 abort (return from recursive function)\n\n" +
		"---- TRACE 1 start (enter) fib_rec() /x/kernels.php:28\n0001 T1 = IS_SMALLER CV0($n) int(3) ; op1(int)\n0002 ;JMPZ T1 0004\n" +
		"0007 V2 = DO_UCALL\n     >enter fib_rec\n0001  T1 = IS_SMALLER CV0($n) int(3)\n---- TRACE 1 stop (recursive call)\n---- TRACE 1 compiled\n"
	got := parsePHPTraces([]byte(stderr))
	ti := got["1"]
	if ti == nil || ti.start != "enter" || ti.stop != "recursive call" || len(ti.ops) != 3 {
		t.Errorf("got %+v, want trace 1: enter, stopped at recursive call, 3 opcodes", ti)
	}
}

// TestPHPJITTracesOfFibRec runs php with opcache's tracing JIT and jit_debug after the
// warm-up: fib_rec's traces are machine code, one of them with the recursion marked.
func TestPHPJITTracesOfFibRec(t *testing.T) {
	if _, err := exec.LookPath("php"); err != nil {
		t.Skip("php not installed: apt-get install php-cli php-opcache")
	}
	k, _ := kernels.Lookup("fib_rec")
	ls, err := explainPHPJIT(context.Background(), request{engine: "php-jit", k: k, args: []int{20}, opts: Options{WarmupTime: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if l := ls[0]; l.Kind != KindMachine || l.Instructions < 10 || l.RecursiveCalls < 1 {
		t.Errorf("first trace: %s, %d instructions, %d recursive calls; want machine code, at least 10 and 1\n%s",
			l.Kind, l.Instructions, l.RecursiveCalls, dump(l))
	}
}
