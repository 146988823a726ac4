// Package capped holds Buffer, an output sink of bounded size for what a crashing program
// or a failing call prints: it keeps the start, where a Go runtime or an interpreter says
// why it gave up, and optionally the end, and drops the middle (goroutine dumps and
// stack traces can run to megabytes).
package capped

import "sync"

// Cut marks where a Buffer dropped bytes between its head and its tail.
const Cut = "[…]"

// Buffer keeps the first Head and the last Tail bytes written to it. Its writes never
// fail, so a writer that fills it is never slowed or stopped. It is safe for concurrent
// use; the zero value keeps nothing.
type Buffer struct {
	// Head and Tail are how many bytes are kept at the start and at the end.
	Head, Tail int

	mu      sync.Mutex
	head    []byte
	tail    []byte
	dropped bool
}

// Write keeps what fits and reports the whole of p written.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.Head - len(b.head); room > 0 {
		take := min(room, len(p))
		b.head = append(b.head, p[:take]...)
		p = p[take:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if b.Tail <= 0 {
		b.dropped = true
		return n, nil
	}
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - b.Tail; over > 0 {
		b.tail = append(b.tail[:0], b.tail[over:]...)
		b.dropped = true
	}
	return n, nil
}

// String returns what was kept: the head, then, when bytes were dropped before the tail,
// a line with Cut, then the tail.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped && len(b.tail) > 0 {
		return string(b.head) + "\n" + Cut + "\n" + string(b.tail)
	}
	return string(b.head) + string(b.tail)
}

// Reset empties the buffer.
func (b *Buffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.head, b.tail, b.dropped = b.head[:0], b.tail[:0], false
}
