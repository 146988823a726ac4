package capped

import (
	"fmt"
	"strings"
	"testing"
)

func TestHeadAndTail(t *testing.T) {
	b := &Buffer{Head: 8, Tail: 8}
	fmt.Fprint(b, "panic: x")
	for range 1000 {
		fmt.Fprint(b, "frame\n")
	}
	fmt.Fprint(b, "end")
	s := b.String()
	if !strings.HasPrefix(s, "panic: x") || !strings.HasSuffix(s, "ame\nend") || !strings.Contains(s, Cut) || len(s) > 8+8+len(Cut)+2 {
		t.Errorf("kept %q", s)
	}
}

func TestHeadOnly(t *testing.T) {
	b := &Buffer{Head: 5}
	n, err := fmt.Fprint(b, "hello, world")
	if n != 12 || err != nil {
		t.Errorf("Write = %d, %v; want all 12 bytes taken", n, err)
	}
	if s := b.String(); s != "hello" {
		t.Errorf("kept %q, want %q", s, "hello")
	}
	b.Reset()
	fmt.Fprint(b, "again")
	if s := b.String(); s != "again" {
		t.Errorf("after Reset kept %q", s)
	}
}

func TestSmallWritesKeepEverything(t *testing.T) {
	b := &Buffer{Head: 4, Tail: 4}
	fmt.Fprint(b, "abcdef")
	if s := b.String(); s != "abcdef" {
		t.Errorf("kept %q, want all of it", s)
	}
}
