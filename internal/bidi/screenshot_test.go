package bidi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// fakeBrowser answers session.new, and browsingContext.captureScreenshot with data; it
// keeps the params of each screenshot command it was sent.
func fakeBrowser(t *testing.T, data string) (url string, sent func() []map[string]any) {
	t.Helper()
	var mu sync.Mutex
	var got []map[string]any
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			var cmd struct {
				ID     int64          `json:"id"`
				Method string         `json:"method"`
				Params map[string]any `json:"params"`
			}
			if ws.ReadJSON(&cmd) != nil {
				return
			}
			answer := map[string]any{"type": "success", "id": cmd.ID, "result": map[string]any{}}
			switch cmd.Method {
			case "session.new":
				answer["result"] = map[string]any{"capabilities": map[string]any{"browserName": "firefox", "browserVersion": "153.8.0"}}
			case "browsingContext.captureScreenshot":
				mu.Lock()
				got = append(got, cmd.Params)
				mu.Unlock()
				if cmd.Params["context"] == "gone" {
					answer = map[string]any{"type": "error", "id": cmd.ID, "error": "no such frame", "message": "context gone not found"}
				} else {
					answer["result"] = map[string]any{"data": data}
				}
			}
			if ws.WriteJSON(answer) != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

func TestCaptureScreenshot(t *testing.T) {
	png := append(append([]byte{}, pngSignature...), "IHDR and the rest"...)
	for _, c := range []struct {
		name, data, context string
		origin              Origin
		err                 string
	}{
		{"the whole document", base64.StdEncoding.EncodeToString(png), "tab-1", Document, ""},
		{"the viewport", base64.StdEncoding.EncodeToString(png), "tab-1", Viewport, ""},
		{"no such origin", "", "tab-1", "window", `origin "window": allowed are "viewport" and "document"`},
		{"not base64", "not base64!", "tab-1", Document, "the data is not base64"},
		{"not a PNG", base64.StdEncoding.EncodeToString([]byte("GIF89a")), "tab-1", Document, "the data (6 bytes) is not a PNG"},
		{"the browser's error", "", "gone", Document, "bidi browsingContext.captureScreenshot: no such frame: context gone not found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url, sent := fakeBrowser(t, c.data)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			conn, err := Dial(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			got, err := conn.CaptureScreenshot(ctx, c.context, c.origin)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("CaptureScreenshot = %v, want an error with %q", err, c.err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, png) {
				t.Fatalf("CaptureScreenshot = %q, %v; want the PNG sent", got, err)
			}
			params := sent()
			want := `[{"context":"tab-1","format":{"type":"image/png"},"origin":"` + string(c.origin) + `"}]`
			if b, _ := json.Marshal(params); string(b) != want {
				t.Errorf("sent %s, want %s", b, want)
			}
		})
	}
}
