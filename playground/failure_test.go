package playground

import "testing"

func TestFailureKind(t *testing.T) {
	for _, c := range []struct{ in, want string }{
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
	} {
		if got := failureKind(c.in); got != c.want {
			t.Errorf("failureKind(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
