package stream

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestUpgradeSpeakingFirst: the handshake's answer held by
// UpgradeSpeakingFirst reaches the client in front of the server's first
// write, whether the loops' write (FlushNow), a blocking Flush or a close
// frame through gorilla carries it.
func TestUpgradeSpeakingFirst(t *testing.T) {
	tests := []struct {
		name  string
		write func(*WS)
		check func(t *testing.T, c *websocket.Conn)
	}{
		{"FlushNow", func(w *WS) {
			w.Note("first")
			if done, err := w.FlushNow(); !done || err != nil {
				t.Errorf("FlushNow: %v, %v", done, err)
			}
		}, wantText(`{"error":"first"}`)},
		{"Flush", func(w *WS) {
			w.Note("first")
			if err := w.Flush(); err != nil {
				t.Errorf("Flush: %v", err)
			}
		}, wantText(`{"error":"first"}`)},
		{"close frame", func(w *WS) {
			w.CloseWith(websocket.CloseTryAgainLater, "log in failed")
		}, func(t *testing.T, c *websocket.Conn) {
			_, _, err := c.ReadMessage()
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.CloseTryAgainLater || ce.Text != "log in failed" {
				t.Errorf("read: %v, want the close frame", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				u, err := UpgradeSpeakingFirst(websocket.Upgrader{}, rw, r, nil)
				if err != nil {
					t.Errorf("upgrade: %v", err)
					return
				}
				tt.write(NewWS(u.WS))
			}))
			defer srv.Close()
			c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			tt.check(t, c)
		})
	}
}

func wantText(want string) func(*testing.T, *websocket.Conn) {
	return func(t *testing.T, c *websocket.Conn) {
		t.Helper()
		if _, got, err := c.ReadMessage(); err != nil || string(got) != want {
			t.Errorf("read %q, %v; want %q", got, err, want)
		}
	}
}
