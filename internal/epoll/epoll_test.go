//go:build linux

package epoll

import (
	"syscall"
	"testing"
	"time"
)

// A registered descriptor's events carry its whole 64-bit token; level-
// triggered, an unread byte is reported at every look; Modify changes the
// events and the token; Delete ends the reports; Await wants NewAwaitable.
func TestSet(t *testing.T) {
	const token = 1<<40 | 7
	s, p := pipeInSet(t, New, token)
	events := make([]Event, 4)
	if n, err := s.Poll(events); n != 0 || err != nil {
		t.Fatalf("Poll of an empty pipe: %d, %v", n, err)
	}
	if n, err := s.Wait(events, 10*time.Millisecond); n != 0 || err != nil {
		t.Fatalf("Wait on an empty pipe: %d, %v", n, err)
	}
	syscall.Write(p[1], []byte{1})
	for range 2 { // level-triggered: still there the second time
		if n, err := s.Wait(events, -1); n != 1 || err != nil || Token(&events[0]) != token || events[0].Events&In == 0 {
			t.Fatalf("Wait: %d, %v, token %#x, events %#x; want the pipe, token %#x", n, err, Token(&events[0]), events[0].Events, uint64(token))
		}
	}
	if err := s.Modify(p[0], In, 3); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Poll(events); n != 1 || err != nil || Token(&events[0]) != 3 {
		t.Fatalf("Poll after Modify: %d, %v, token %d; want token 3", n, err, Token(&events[0]))
	}
	if err := s.Delete(p[0]); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Poll(events); n != 0 || err != nil {
		t.Fatalf("Poll after Delete: %d, %v", n, err)
	}
	if err := s.Delete(p[0]); err == nil {
		t.Error("Delete of a descriptor not in the set: no error")
	}
	if _, err := s.Await(events); err == nil {
		t.Error("Await on a set made by New: no error")
	}
}

// Await waits in Go's netpoller for the set's next event: each round it
// is already waiting when the byte is written (the set was empty), and it
// returns the pipe's token; a byte left unread is returned again at once.
func TestAwait(t *testing.T) {
	s, p := pipeInSet(t, NewAwaitable, 5)
	type result struct {
		n   int
		err error
		tok uint64
	}
	events := make([]Event, 4)
	await := func() chan result {
		got := make(chan result, 1)
		go func() {
			n, err := s.Await(events)
			got <- result{n, err, Token(&events[0])}
		}()
		return got
	}
	check := func(round int, got chan result) {
		select {
		case r := <-got:
			if r.n != 1 || r.err != nil || r.tok != 5 {
				t.Fatalf("round %d: Await: %d, %v, token %d; want the pipe, token 5", round, r.n, r.err, r.tok)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: Await returned nothing after the pipe's byte", round)
		}
	}
	var buf [8]byte
	for round := range 3 {
		got := await()
		select {
		case r := <-got:
			t.Fatalf("round %d: Await returned %+v from an empty set", round, r)
		case <-time.After(20 * time.Millisecond): // most likely waiting by now; a late start is checked all the same
		}
		syscall.Write(p[1], []byte{1})
		check(round, got)
		check(round, await()) // unread: reported again
		syscall.Read(p[0], buf[:])
	}
}

// pipeInSet is a set made by newSet holding a non-blocking pipe's read
// end, p[0], for In under token; the test's end closes them.
func pipeInSet(t *testing.T, newSet func() (*Set, error), token uint64) (*Set, [2]int) {
	t.Helper()
	s, err := newSet()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(p[0]); syscall.Close(p[1]) })
	if err := s.Add(p[0], In, token); err != nil {
		t.Fatal(err)
	}
	return s, p
}
