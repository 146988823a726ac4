package load_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/wasmgap/wasmgap/chatserver"
	"github.com/wasmgap/wasmgap/load"
)

// A chat scenario: 5 receivers over WebSocket, 100 private messages posted to them.
func ExampleRunScenario() {
	dir, _ := os.MkdirTemp("", "example-chat-")
	defer os.RemoveAll(dir)
	chat, err := chatserver.New(chatserver.Options{DataDir: dir})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(chat.Handler())
	defer srv.Close()
	defer chat.Shutdown(context.Background())

	rep, err := load.RunScenario(context.Background(), load.ScenarioOptions{
		Scenario:  load.ScenarioChatSend,
		Target:    srv.URL + "/",
		Receivers: 5,
		Transport: "ws",
		Messages:  100,
		Drain:     time.Minute, // ends at the last delivery; only a slow machine waits longer
	})
	if err != nil {
		panic(err)
	}
	d := rep.Delivery
	fmt.Printf("sent %d, delivered %d, lost %d, duplicated %d\n", d.Sent, d.Delivered, d.Lost, d.Duplicated)
	// Output: sent 100, delivered 100, lost 0, duplicated 0
}

// Reporters consume a Report: a readable summary or JSON.
func ExampleWriteText() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	rep, err := load.Run(context.Background(), load.Options{
		Request: load.Request{URL: srv.URL}, Connections: 2, Requests: 100, Rate: 1000, // open model
	})
	if err != nil {
		panic(err)
	}
	load.WriteText(os.Stdout, rep) // or load.WriteJSON
}
