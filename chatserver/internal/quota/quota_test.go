package quota

import (
	"strings"
	"testing"
)

func TestSenders(t *testing.T) {
	s := NewSenders(1, 2)
	for i := range 2 {
		if ok, _ := s.Allow("mary"); !ok {
			t.Fatalf("send %d of a burst of 2 refused", i+1)
		}
	}
	ok, wait := s.Allow("mary")
	if ok || wait <= 0 {
		t.Fatalf("third send at once: allowed %v, wait %v; want refused with a wait", ok, wait)
	}
	if ok, _ := s.Allow("john"); !ok {
		t.Error("another nickname shares mary's bucket")
	}
	if !strings.Contains(s.Rule(), "per nickname") {
		t.Errorf("rule %q does not say what is allowed", s.Rule())
	}
	none := NewSenders(-1, 0)
	if ok, _ := none.Allow("mary"); !ok {
		t.Error("no limit refused a send")
	}
}

func TestStreams(t *testing.T) {
	s := NewStreams(2)
	if !s.Acquire("a") || !s.Acquire("a") || s.Acquire("a") {
		t.Fatal("want two streams of address a, not three")
	}
	if !s.Acquire("b") {
		t.Error("address b refused for a's streams")
	}
	s.Release("a")
	if !s.Acquire("a") {
		t.Error("a stream released, and still refused")
	}
	if s.Max() != 2 {
		t.Errorf("Max %d, want 2", s.Max())
	}
}
