package stream

import (
	"maps"
	"slices"
	"testing"
)

// TestSet: a set holds its streams with their tokens whichever is added or
// removed first; removing one not in it reports false.
func TestSet(t *testing.T) {
	a, b, c := NewConn("a", 1), NewConn("a", 1), NewConn("a", 1)
	tokens := map[*Conn]uint64{a: 1, b: 2, c: 3}
	for _, order := range [][]*Conn{{a, b, c}, {b, a, c}, {c, b, a}} {
		var s Set
		for _, x := range []*Conn{a, b, c} {
			s.Add(x, tokens[x])
		}
		if got := slices.Collect(s.All()); len(got) != 3 || !slices.Contains(got, a) || !slices.Contains(got, b) || !slices.Contains(got, c) {
			t.Fatalf("All yields %d streams, want a, b and c", len(got))
		}
		left := maps.Clone(tokens)
		for _, x := range order {
			token, ok := s.Remove(x)
			if !ok || token != tokens[x] {
				t.Fatalf("Remove = %d, %v, want %d, true", token, ok, tokens[x])
			}
			delete(left, x)
			if got := slices.Collect(s.All()); len(got) != len(left) {
				t.Fatalf("after a removal All yields %d streams, want %d", len(got), len(left))
			}
			if _, ok := s.Remove(x); ok {
				t.Fatal("removed twice")
			}
		}
		if !s.Empty() {
			t.Error("not empty once all were removed")
		}
	}
}
