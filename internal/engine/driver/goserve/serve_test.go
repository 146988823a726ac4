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
