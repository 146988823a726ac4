package nbio

import (
	"errors"
	"net"
	"slices"
	"testing"
)

// recordConn records each Write as one call; it takes at most max bytes of
// one (all when max is 0) and then fails with errShort.
type recordConn struct {
	net.Conn
	writes [][]byte
	max    int
}

var errShort = errors.New("short write")

func (c *recordConn) Write(p []byte) (int, error) {
	if c.max > 0 && len(p) > c.max {
		c.writes = append(c.writes, slices.Clone(p[:c.max]))
		return c.max, errShort
	}
	c.writes = append(c.writes, slices.Clone(p))
	return len(p), nil
}

func TestPrefixedHold(t *testing.T) {
	tests := []struct {
		name      string
		max       int
		second    string
		wantN     int
		wantErr   error
		wantWrite string // the one write the connection saw
		wantHeld  string // still held after it
	}{
		{"held goes out in front, in one write", 0, "frame", 5, nil, "answerframe", ""},
		{"a short write inside the held bytes keeps their rest", 3, "frame", 0, errShort, "ans", "wer"},
		{"a short write inside p counts only p's bytes", 8, "frame", 2, errShort, "answerfr", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &recordConn{max: tt.max}
			c := &Prefixed{Conn: rc, Hold: true}
			buf := []byte("answer")
			if n, err := c.Write(buf); n != len(buf) || err != nil {
				t.Fatalf("held write: %d, %v", n, err)
			}
			copy(buf, "XXXXXX") // the caller reuses its buffer
			if len(rc.writes) != 0 || c.Hold {
				t.Fatalf("the held write reached the connection (%q) or Hold stayed on", rc.writes)
			}
			n, err := c.Write([]byte(tt.second))
			if n != tt.wantN || err != tt.wantErr {
				t.Errorf("write: %d, %v; want %d, %v", n, err, tt.wantN, tt.wantErr)
			}
			if len(rc.writes) != 1 || string(rc.writes[0]) != tt.wantWrite {
				t.Errorf("the connection saw %q, want one write %q", rc.writes, tt.wantWrite)
			}
			if string(c.Held) != tt.wantHeld {
				t.Errorf("held after: %q, want %q", c.Held, tt.wantHeld)
			}
		})
	}
	t.Run("taken, nothing is held", func(t *testing.T) {
		rc := &recordConn{}
		c := &Prefixed{Conn: rc, Hold: true}
		c.Write([]byte("answer"))
		if got := string(c.TakeHeld()); got != "answer" {
			t.Fatalf("taken %q", got)
		}
		c.Write([]byte("frame"))
		if len(rc.writes) != 1 || string(rc.writes[0]) != "frame" {
			t.Errorf("after TakeHeld the connection saw %q", rc.writes)
		}
	})
}
