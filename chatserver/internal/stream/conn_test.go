package stream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestPushCutsAFullQueue: a stream takes events up to Max; the next one
// cuts it with the slow-consumer reason, and what follows is dropped.
func TestPushCutsAFullQueue(t *testing.T) {
	c := NewConn("john", 2)
	c.Push(NewEvent(1, "a"))
	c.Push(NewEvent(2, "b"))
	if r := c.CutReason(); r != "" {
		t.Fatalf("cut at %d events of 2: %q", 2, r)
	}
	c.Push(NewEvent(3, "c"))
	select {
	case <-c.Gone:
	default:
		t.Fatal("a third event on a queue of 2 did not cut the stream")
	}
	if want := fmt.Sprintf(Slow, 2); c.CutReason() != want {
		t.Errorf("reason %q, want %q", c.CutReason(), want)
	}
	c.Push(NewEvent(4, "d"))
	if evs := c.Take(nil); len(evs) != 2 || evs[0].ID != 1 || evs[1].ID != 2 {
		t.Errorf("queue after the cut: %v, want events 1 and 2 only", evs)
	}
	c.Cut(Closed) // the first reason stays
	if !strings.HasPrefix(c.CutReason(), "slow consumer") {
		t.Errorf("a second cut replaced the reason: %q", c.CutReason())
	}
}

// TestEventEncoding: an event is encoded once for each transport, in the
// article's SSE form and as an unmasked WebSocket text frame.
func TestEventEncoding(t *testing.T) {
	ev := NewEvent(42, `mary: "hi"`)
	if got, want := string(ev.SSE), "id: 42\ndata: mary: \"hi\"\n\n"; got != want {
		t.Errorf("SSE %q, want %q", got, want)
	}
	payload := `{"id":42,"text":"mary: \"hi\""}`
	if ev.WS[0] != 0x81 || int(ev.WS[1]) != len(payload) || string(ev.WS[2:]) != payload {
		t.Errorf("WebSocket frame % x, want 81 %02x and %s", ev.WS, len(payload), payload)
	}
	long := AppendTextFrame(nil, make([]byte, 300))
	if long[1] != 126 || int(long[2])<<8|int(long[3]) != 300 {
		t.Errorf("a 300-byte frame's header % x, want 81 7e 01 2c", long[:4])
	}
	// Any text: its frame is the JSON object's, with a header of the length's size.
	for _, text := range []string{"", "a\nb\n", "<b>&amp;</b> \u2028 é\x01", strings.Repeat("x", 200), strings.Repeat("y", 70000)} {
		ev := NewEvent(1<<40, text)
		js, _ := json.Marshal(struct {
			ID   uint64 `json:"id"`
			Text string `json:"text"`
		}{1 << 40, text})
		if want := AppendTextFrame(nil, js); !bytes.Equal(ev.WS, want) {
			t.Errorf("the frame of %.20q: % .20x, want % .20x", text, ev.WS, want)
		}
		if want := "id: 1099511627776\ndata: " + strings.ReplaceAll(text, "\n", "\ndata: ") + "\n\n"; string(ev.SSE) != want {
			t.Errorf("the SSE event of %.20q: %.60q, want %.60q", text, ev.SSE, want)
		}
	}
}
