package web

import (
	"encoding/json"
	"testing"
)

// The page words a failed cell in one short line (src/failure.ts: failureKind), the same
// words whatever tier failed and however its runtime put it.
func TestFailureKind(t *testing.T) {
	cases := []struct{ in, want string }{
		{"timed out after 30s", "timed out after 30 s"},
		{"timed out after 1.5s", "timed out after 1.5 s"},
		{"stack overflow", "stack overflow"},
		{"RangeError: Maximum call stack size exceeded\n    at fib (worker.js:1:2)", "stack overflow"},
		{"InternalError: too much recursion", "stack overflow"},
		{"crashed: fatal error: runtime: out of memory", "out of memory"},
		{"wasm error: out of bounds memory access\nwasm stack trace:\n\tkernels.alloc(i32)", "trapped"},
		{"wasm error: unreachable\nwasm stack trace:\n\t.runtime.runtimePanicAt", "trapped"},
		{"RuntimeError: unreachable executed", "trapped"},
		{"wrong result: got 1, want 2", "wrong value"},
		{"load failed: no such file", "failed to load"},
		{"load failed: lua5.4 not installed: apt-get install lua5.4", "lua5.4 not installed: apt-get install lua5.4"},
		{"something new\nand its trace", "something new"},
	}
	var in []string
	for _, c := range cases {
		in = append(in, c.in)
	}
	out := runNode(t, in, `const { failureKind } = await import(process.env.DIR + "/failure.mjs");
console.log(JSON.stringify(input.map(failureKind)));`, "failure")
	var got []string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(cases) {
		t.Fatalf("node printed %q (%v), want %d lines", out, err, len(cases))
	}
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("failureKind(%q) = %q in failure.ts, want %q", c.in, got[i], c.want)
		}
	}
}
