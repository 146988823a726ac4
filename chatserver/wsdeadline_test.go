package chatserver

import (
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestWSControlKeepsWriteDeadline: a control frame (here the pong to the
// client's ping) is written under a deadline of its own, one second away;
// the events written after it still have the stream's WriteTimeout, so an
// event more than a second after a pong reaches the client.
func TestWSControlKeepsWriteDeadline(t *testing.T) {
	ts := startServer(t, Options{WriteTimeout: time.Minute, KeepAlive: time.Hour})
	w := ts.login(t, "ws", "jane")
	w.expect("Welcome jane!", "now online: ")
	if err := w.ws.WriteControl(websocket.PingMessage, []byte("are you there"), time.Now().Add(waitFor)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // past the pong's own deadline
	if status, body := ts.msg(t, "mary", "all", "hello"); status != 200 {
		t.Fatalf("send: %d %s", status, body)
	}
	w.expect("mary to all: hello")
}
