package stream

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// recorder is a Transport that records what it was asked to write.
type recorder struct {
	mu     sync.Mutex
	writes []string
}

func (r *recorder) add(s string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, s)
	return nil
}
func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.writes)
}
func (r *recorder) SetDeadline(time.Time)            {}
func (r *recorder) Event(ev *Event) error            { return r.add(ev.Text) }
func (r *recorder) Note(msg string) error            { return r.add("note: " + msg) }
func (r *recorder) Ping() error                      { return r.add("ping") }
func (r *recorder) Flush() error                     { return r.add("flush") }
func (r *recorder) End(reason string, _ bool)        { r.add("end: " + reason) }
func (r *recorder) AskAck(_, _ uint64) (bool, error) { return true, nil }

type noHost struct{}

func (noHost) Pruned() uint64                                        { return 0 }
func (noHost) Closing() bool                                         { return false }
func (noHost) Replay(*Conn, uint64, uint64, Transport, func()) error { return nil }
func (noHost) Delivered(string, uint64, uint64)                      {}
func (noHost) Loops() *Loops                                         { return nil }

// waitUntil polls cond; the bound only keeps a broken writer from hanging the test.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not %s within 10 s", what)
		}
	}
}

// TestLiveWritesOnDemand: a stream's writer is a goroutine only while there
// is something to write. After its login, and after each batch of events,
// no goroutine of the stream is left; a pushed event, a note and the cut
// each start one; the cut's reason is written last, and Stop returns it.
func TestLiveWritesOnDemand(t *testing.T) {
	before := runtime.NumGoroutine()
	c := NewConn("john", 8)
	r := &recorder{}
	l := Start(c, Plan{Preamble: []*Event{NewEvent(1, "Welcome john!")}}, r, noHost{},
		Timing{WriteTimeout: time.Minute, KeepAlive: time.Hour, MailAckDelay: time.Hour}, nil)
	idle := func() bool { return l.state.Load() == writerIdle && runtime.NumGoroutine() <= before }
	waitUntil(t, "idle after the login", idle)
	if got := r.got(); !slices.Equal(got, []string{"Welcome john!", "flush"}) {
		t.Fatalf("login wrote %q", got)
	}

	c.Push(NewEvent(2, "a"))
	c.Push(NewEvent(3, "b"))
	waitUntil(t, "idle after two events", func() bool { return idle() && len(r.got()) >= 4 })
	if got := r.got()[2:]; got[0] != "a" || !slices.Contains(got, "b") || got[len(got)-1] != "flush" {
		t.Fatalf("events written as %q", got)
	}
	if !l.Note(nil, "bad frame") {
		t.Fatal("note refused")
	}
	waitUntil(t, "idle after a note", func() bool { return idle() && slices.Contains(r.got(), "note: bad frame") })

	reason := fmt.Sprintf(Slow, 8)
	c.Cut(reason)
	select {
	case <-l.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the cut did not end the stream within 10 s")
	}
	if got := r.got(); got[len(got)-1] != "end: "+reason {
		t.Errorf("last write %q, want the cut's reason", got[len(got)-1])
	}
	if err := l.Stop(); err == nil || err.Error() != reason {
		t.Errorf("Stop = %v, want the cut's reason", err)
	}
	c.Push(NewEvent(4, "after the cut"))
	waitUntil(t, "no goroutine left after the end", func() bool { return runtime.NumGoroutine() <= before })
	if slices.Contains(r.got(), "after the cut") {
		t.Error("an event after the cut was written")
	}
}

// TestLiveStop: Stop ends an idle stream (its client went) with
// context.Canceled and leaves no goroutine.
func TestLiveStop(t *testing.T) {
	before := runtime.NumGoroutine()
	l := Start(NewConn("john", 8), Plan{}, &recorder{}, noHost{},
		Timing{WriteTimeout: time.Minute, KeepAlive: time.Hour, MailAckDelay: time.Hour}, nil)
	if err := l.Stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("Stop = %v, want context.Canceled", err)
	}
	waitUntil(t, "no goroutine left", func() bool { return runtime.NumGoroutine() <= before })
}
