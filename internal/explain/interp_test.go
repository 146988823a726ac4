package explain

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/kernels"
)

func TestParsePHPOpcodes(t *testing.T) {
	out := "fib_it:\n0000 CV0($n) = RECV 1\n\nack:\n     ; (lines=31, args=2, vars=2, tmps=9)\n     ; (before optimizer)\n" +
		"0000 CV0($n) = RECV 1\n0001 JMP 0000\n" +
		"0002 INIT_FCALL_BY_NAME 2 string(\"ack\")\n0003 INIT_FCALL 1 96 string(\"count\")\n0004 V1 = DO_ICALL\n" +
		"0005 SEND_VAR V1 1\n0006 V2 = DO_FCALL_BY_NAME\n0007 RETURN V2\nLIVE RANGES:\n     3: 0008 - 0012 (tmp/var)\n\nnext:\n0000 RETURN null\n"
	lines := parsePHPOpcodes([]byte(out), "ack")
	l := bytecodeListing("php", "t", "ack", "test", lines)
	if l.Instructions != 8 || l.Calls != 2 || l.RecursiveCalls != 1 || l.BackEdges != 1 || !l.Lines[0].LoopHead {
		t.Errorf("%d opcodes, %d calls, %d recursive, %d back edges; want 8, 2, 1 (the outer call), 1 to a loop head at 0\n%s",
			l.Instructions, l.Calls, l.RecursiveCalls, l.BackEdges, dump(l))
	}
}

func TestLuaFunctionLines(t *testing.T) {
	tests := []struct {
		name   string
		luajit bool
		out    string
	}{
		{"luac", false, "function <k.lua:40,41> (1 instruction at 0x1)\n\t1\t[40]\tRETURN0\t\n\n" +
			"function <k.lua:42,45> (5 instructions at 0x2)\n1 param, 4 slots, 1 upvalue, 1 local, 0 constants, 0 functions\n" +
			"\t1\t[43]\tLTI      \t0 3 0\n\t2\t[44]\tGETUPVAL \t1 0\t; fib_rec\n\t3\t[44]\tCALL     \t1 2 2\t; 1 in 1 out\n" +
			"\t4\t[44]\tJMP      \t-4\t; to 1\n\t5\t[45]\tRETURN0  \t\n\n"},
		{"luajit", true, "-- BYTECODE -- k.lua:40-41\n0001    RET0     0   1\n\n-- BYTECODE -- k.lua:42-45\n0001 => KSHORT   1   3\n" +
			"0002    UGET     1   0      ; fib_rec\n0003    CALL     1   2   2\n0004    JMP      1 => 0001\n0005    RET1     1   2\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := bytecodeListing("lua", "t", "fib_rec", "test", luaFunctionLines([]byte(tt.out), "fib_rec", 42, tt.luajit))
			if l.Instructions != 5 || l.RecursiveCalls != 1 || l.BackEdges != 1 || !l.Lines[0].LoopHead {
				t.Errorf("%d instructions, %d recursive calls, %d back edges; want 5, 1, 1 to the first\n%s",
					l.Instructions, l.RecursiveCalls, l.BackEdges, dump(l))
			}
		})
	}
}

// TestInterpretersListWhatTheyRun runs each interpreter's own listing tool over the
// drivers' kernels: fib_rec's two calls of itself and test1's two loops are marked, and
// each listing says that the interpreter has no machine code of the kernel.
func TestInterpretersListWhatTheyRun(t *testing.T) {
	for _, tt := range []struct{ engine, tool string }{
		{"php", "php"}, {"lua", "luac5.4"}, {"luajit-interp", "luajit"}, {"python", "python3"},
		{"wazero-interpreter", "wasm-objdump"}, {"yaegi", ""}, {"java-int", "javap"},
	} {
		t.Run(tt.engine, func(t *testing.T) {
			if tt.tool != "" {
				if _, err := exec.LookPath(tt.tool); err != nil {
					t.Skipf("%s not installed", tt.tool)
				}
			}
			for _, kc := range []struct {
				kernel           string
				args             []int
				recursive, backs int
			}{{"fib_rec", []int{10}, 2, 0}, {"test1", []int{1000, 100}, 0, 2}} {
				k, _ := kernels.Lookup(kc.kernel)
				rep, err := Explain(context.Background(), k, kc.args, []string{tt.engine}, Options{WarmupTime: 100 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				e := rep.Engines[0]
				if e.Refused != "" {
					t.Fatalf("%s: %s", kc.kernel, e.Refused)
				}
				l := e.Listings[0]
				if tt.engine != "wazero-interpreter" && tt.engine != "yaegi" && (l.RecursiveCalls != kc.recursive || l.BackEdges != kc.backs) {
					t.Errorf("%s: %d recursive calls, %d back edges; want %d and %d\n%s", kc.kernel, l.RecursiveCalls, l.BackEdges, kc.recursive, kc.backs, dump(l))
				}
				if (kc.recursive > 0) != (l.RecursiveCalls > 0) {
					t.Errorf("%s: %d recursive calls\n%s", kc.kernel, l.RecursiveCalls, dump(l))
				}
				if !strings.Contains(strings.Join(l.Notes, " "), "no machine code of the kernel") {
					t.Errorf("%s: notes %q do not say there is no machine code", kc.kernel, l.Notes)
				}
			}
		})
	}
}

func TestParseJavap(t *testing.T) {
	out := "  static long fibIt(int);\n    Code:\n       0: lconst_0\n       1: lreturn\n\n" +
		"  static long fibRec(int);\n    Code:\n       0: iload_0\n       1: iconst_3\n       2: if_icmpge     0\n" +
		"      10: invokestatic  #7                  // Method fibRec:(I)J\n      13: invokestatic  #8                  // Method count:(I)J\n" +
		"      20: lreturn\n\n  static long ack(int, int);\n"
	l := bytecodeListing("java-int", "t", "fibRec", "test", parseJavap([]byte(out), "fibRec"))
	if l.Instructions != 6 || l.Calls != 2 || l.RecursiveCalls != 1 || l.BackEdges != 1 {
		t.Errorf("%d instructions, %d calls, %d recursive, %d back edges; want 6, 2, 1, 1\n%s", l.Instructions, l.Calls, l.RecursiveCalls, l.BackEdges, dump(l))
	}
}
