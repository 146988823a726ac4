package explain

import (
	"strings"
	"testing"
)

// TestSummarizeSaysWhatTheCodeSpendsOn: the words of a machine listing beside the
// baseline's count what its lines hold: its size against the baseline, its calls and
// loops, stack-growth and bounds checks, a jump table, indirect jumps and calls, stack
// stores; a refused engine says why; the baseline itself is not measured against itself.
func TestSummarizeSaysWhatTheCodeSpendsOn(t *testing.T) {
	base := Listing{Engine: "native", Tier: "gc", Kind: KindMachine, Instructions: 2, Calls: 1, Lines: []Line{
		{Text: "cmp rsp, qword ptr [r14+0x10]"},
		{Text: "call 0x49d980", Call: true, Note: "→ runtime.morestack_noctxt.abi0"},
	}}
	other := Listing{Engine: "wazero-compiler", Tier: "wazero", Kind: KindMachine, Instructions: 8, Calls: 2, BackEdges: 1, Lines: []Line{
		{Text: "mov qword ptr [rsp+0x10], rax"},
		{Text: "lea r10, ptr [rip+0x7]"},
		{Text: "jmp r10"},
		{Text: ".quad 0x40", Data: true, Note: "jump table entry: +0xa7"},
		{Text: ".quad 0x45", Data: true, Note: "jump table entry: +0xac"},
		{Text: "call qword ptr [rax+0x50]", Call: true},
		{Text: "call 0x49d990", Call: true, Note: "→ runtime.panicIndex"},
		{Text: "jl 0x8f5abc", BackEdge: true},
		{Text: "jmp 0x8f5ac9"},
	}}
	rep := &Report{Label: "fib_it(40)", Engines: []Explanation{
		{Engine: "native", Listings: []Listing{base}},
		{Engine: "wazero-compiler", Listings: []Listing{other}},
		{Engine: "node-wasm", Refused: "node not installed\nmore"},
	}}
	rows := Summarize(rep)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3: %+v", len(rows), rows)
	}
	for _, tt := range []struct {
		row      int
		has, not []string
	}{
		{0, []string{"machine code, 2 instructions", "1 other call", "1 stack-growth check"}, []string{"against", "bounds"}},
		{1, []string{"8 instructions against native's 2 (4.0×)", "2 other calls", "1 back edge", "1 bounds check",
			"a jump table of 2 entries", "1 indirect jump", "1 indirect call", "1 store to the stack frame"}, []string{"stack-growth"}},
		{2, []string{"not explained: node not installed"}, []string{"more"}},
	} {
		w := rows[tt.row].Words
		for _, s := range tt.has {
			if !strings.Contains(w, s) {
				t.Errorf("row %d %q lacks %q", tt.row, w, s)
			}
		}
		for _, s := range tt.not {
			if strings.Contains(w, s) {
				t.Errorf("row %d %q says %q", tt.row, w, s)
			}
		}
	}
	if rows[2].Form != "" || rows[1].Form != KindMachine || rows[1].Instructions != 8 {
		t.Errorf("rows' forms and counts: %+v", rows)
	}
}

// TestCountsInWords: one of a thing is singular, and no recursive count is said when
// there is none.
func TestCountsInWords(t *testing.T) {
	for _, tt := range []struct {
		l    Listing
		want string
	}{
		{Listing{Bytes: 57, Instructions: 21, Calls: 1, BackEdges: 1}, "57 bytes, 21 instructions, 1 call, 1 back edge"},
		{Listing{Bytes: 1, Instructions: 1, Calls: 2, RecursiveCalls: 2, BackEdges: 2}, "1 byte, 1 instruction, 2 calls (2 recursive), 2 back edges"},
	} {
		if got := tt.l.counts(); got != tt.want {
			t.Errorf("counts() = %q, want %q", got, tt.want)
		}
	}
	if got := plural(3, "entry"); got != "3 entries" {
		t.Errorf("plural(3, entry) = %q", got)
	}
}
