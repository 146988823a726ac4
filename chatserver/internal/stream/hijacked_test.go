package stream

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/nbio"
)

// TestServeHijackedIdleHoldsNoGoroutine: idle event streams watched by a
// Watcher hold no goroutine; each one's client going, or its stream
// ending (cut), calls finish once and closes the connection.
func TestServeHijackedIdleHoldsNoGoroutine(t *testing.T) {
	w, err := nbio.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const streams = 50
	type open struct {
		conn     *Conn
		client   net.Conn
		finished *atomic.Int32
	}
	var opens []open
	before := runtime.NumGoroutine()
	for i := range streams {
		sc, cc := tcpPair(t)
		c := NewConn(fmt.Sprintf("user%d", i), 8)
		var finished atomic.Int32
		ServeHijacked(sc, w, func(onEnd func()) *Writer {
			return Start(c, Plan{Preamble: []*Event{NewEvent(1, "Welcome!")}}, NewRawSSE(sc), noHost{}, loopTiming, onEnd)
		}, func(l *Writer) {
			l.Stop()
			finished.Add(1)
		})
		opens = append(opens, open{c, cc, &finished})
	}
	for _, o := range opens {
		readEvents(t, o.client, bufio.NewReader(o.client), 1) // the login is written
	}
	waitUntil(t, "no goroutine per idle stream", func() bool { return runtime.NumGoroutine() <= before+streams/10 })

	// The client goes: finish, once.
	opens[0].client.Close()
	waitUntil(t, "finish after the client went", func() bool { return opens[0].finished.Load() == 1 })
	// The stream ends (cut): finish once, and its client reads the reason, then the end.
	opens[1].conn.Cut(ShuttingDown)
	waitUntil(t, "finish after the cut", func() bool { return opens[1].finished.Load() == 1 })
	opens[1].client.SetReadDeadline(time.Now().Add(10 * time.Second))
	rest, err := io.ReadAll(opens[1].client)
	if err != nil || len(rest) == 0 {
		t.Errorf("after the cut the client read %q, %v: want the reason, then the end", rest, err)
	}
	for _, o := range opens[2:] {
		o.client.Close()
	}
	waitUntil(t, "every stream finished", func() bool {
		for _, o := range opens {
			if o.finished.Load() != 1 {
				return false
			}
		}
		return true
	})
	time.Sleep(20 * time.Millisecond)
	for i, o := range opens {
		if n := o.finished.Load(); n != 1 {
			t.Errorf("stream %d finished %d times, want once", i, n)
		}
	}
	waitUntil(t, "no goroutine left", func() bool { return runtime.NumGoroutine() <= before })
}

// TestServeHijackedWithoutWatcher: with no Watcher, a goroutine reads each
// connection, and the client's going still finishes its stream once.
func TestServeHijackedWithoutWatcher(t *testing.T) {
	before := runtime.NumGoroutine()
	sc, cc := tcpPair(t)
	c := NewConn("john", 8)
	var finished atomic.Int32
	ServeHijacked(sc, nil, func(onEnd func()) *Writer {
		return Start(c, Plan{}, NewRawSSE(sc), noHost{}, loopTiming, onEnd)
	}, func(l *Writer) {
		l.Stop()
		finished.Add(1)
	})
	cc.Close()
	waitUntil(t, "finish after the client went", func() bool { return finished.Load() == 1 })
	waitUntil(t, "no goroutine left", func() bool { return runtime.NumGoroutine() <= before })
}
