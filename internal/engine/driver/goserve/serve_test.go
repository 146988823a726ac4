package goserve

import (
	"bytes"
	"strings"
	"testing"
)

var testKernels = []Kernel{{
	Name:   "twice",
	Params: []Param{{Name: "n", Min: 0, Max: 10}},
	Call:   func(a []int) int64 { return int64(2 * a[0]) },
}}

func TestServe(t *testing.T) {
	in := strings.NewReader("twice 3 4\ntwice 1 11\nnope 1 1\ntwice 0 1\ntwice 1\ntwice 1 x\n")
	var out bytes.Buffer
	if err := Serve(in, &out, "go", "test", testKernels); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		"ready go test",
		"ok 8 24 ",
		`error twice: n = "11" is out of range: allowed 0 to 10`,
		`error unknown kernel "nope"`,
		`error reps "0" is not allowed: want an integer from 1 to 1000000000`,
		"error too few fields",
		`error twice: n = "x" is not an integer`,
	}
	if len(lines) != len(want) {
		t.Fatalf("answers %q, want %d lines", lines, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], w)
		}
	}
}

func TestSource(t *testing.T) {
	s := Source("main")
	if !strings.Contains(s, "\npackage main\n") || strings.Contains(s, "package goserve") {
		t.Errorf("Source(main) does not declare package main:\n%.300s", s)
	}
}

func TestAnswerTimes(t *testing.T) {
	tests := []struct{ line, want string }{
		{"times twice 3 2 4", "times 8 48 "},
		{"times twice 0 2 4", `error samples "0" is not allowed`},
		{"times twice 1001 1 4", `error samples "1001" is not allowed`},
		{"times twice 2 0 4", `error reps "0" is not allowed`},
		{"times twice 2 1", "error too few fields: want times"},
		{"times nope 2 1 1", `error unknown kernel "nope"`},
	}
	for _, tt := range tests {
		got := Answer(tt.line, testKernels)
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("Answer(%q) = %q, want it to start with %q", tt.line, got, tt.want)
		}
	}
	if f := strings.Fields(Answer("times twice 3 2 4", testKernels)); len(f) != 3+3 {
		t.Errorf("a times answer of %d fields, want 3 + 3 samples", len(f))
	}
}
