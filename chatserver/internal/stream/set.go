package stream

import "iter"

// Set is one user's streams on a node, each with its token. Most users
// have one stream, held in the set itself: a map per user was the largest
// object an idle stream held in the hub.
type Set struct {
	one   *Conn
	token uint64
	more  map[*Conn]uint64 // the others, when there are
}

// Add puts c in the set with its token.
func (s *Set) Add(c *Conn, token uint64) {
	if s.one == nil || s.one == c {
		s.one, s.token = c, token
		return
	}
	if s.more == nil {
		s.more = map[*Conn]uint64{}
	}
	s.more[c] = token
}

// Remove takes c out of the set and returns its token; false when c was
// not in it.
func (s *Set) Remove(c *Conn) (uint64, bool) {
	if s.one != c {
		token, ok := s.more[c]
		delete(s.more, c)
		return token, ok && c != nil
	}
	token := s.token
	s.one, s.token = nil, 0
	for o, t := range s.more {
		// Another stream takes the set's own place.
		s.one, s.token = o, t
		delete(s.more, o)
		break
	}
	if len(s.more) == 0 {
		s.more = nil
	}
	return token, true
}

// Empty reports whether the set holds no stream.
func (s *Set) Empty() bool { return s.one == nil }

// All yields the streams of the set.
func (s Set) All() iter.Seq[*Conn] {
	return func(yield func(*Conn) bool) {
		if s.one == nil || !yield(s.one) {
			return
		}
		for c := range s.more {
			if !yield(c) {
				return
			}
		}
	}
}
