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

// Local is a node's streams, by nick. Its changes since the last Keep are
// undone by Undo (the batch that made them failed to commit).
type Local struct {
	byNick map[string]Set
	undo   []func()
}

// Add puts c in with its token.
func (l *Local) Add(c *Conn, token uint64) {
	l.add(c, token)
	l.undo = append(l.undo, func() { l.remove(c) })
}

// Remove takes c out and returns its token; false when c was not in.
func (l *Local) Remove(c *Conn) (uint64, bool) {
	token, ok := l.remove(c)
	if ok {
		l.undo = append(l.undo, func() { l.add(c, token) })
	}
	return token, ok
}

// Undo takes back the changes since the last Keep, the newest first.
func (l *Local) Undo() {
	for i := len(l.undo) - 1; i >= 0; i-- {
		l.undo[i]()
	}
	l.Keep()
}

// Keep keeps the changes made so far.
func (l *Local) Keep() {
	clear(l.undo)
	l.undo = l.undo[:0]
}

// To yields the streams of nick to, or, when to is "", every stream but
// those of nick except.
func (l *Local) To(to, except string) iter.Seq[*Conn] {
	if to != "" {
		return l.byNick[to].All()
	}
	return func(yield func(*Conn) bool) {
		for nick, cs := range l.byNick {
			if nick == except {
				continue
			}
			for c := range cs.All() {
				if !yield(c) {
					return
				}
			}
		}
	}
}

func (l *Local) add(c *Conn, token uint64) {
	if l.byNick == nil {
		l.byNick = map[string]Set{}
	}
	cs := l.byNick[c.Nick]
	cs.Add(c, token)
	l.byNick[c.Nick] = cs
}

func (l *Local) remove(c *Conn) (uint64, bool) {
	cs := l.byNick[c.Nick]
	token, ok := cs.Remove(c)
	if l.byNick[c.Nick] = cs; cs.Empty() {
		delete(l.byNick, c.Nick)
	}
	return token, ok
}
