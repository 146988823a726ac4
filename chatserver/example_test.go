package chatserver_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/wasmgap/wasmgap/chatserver"
)

// The article's session: john logs in over SSE, mary sends him a message
// with the article's GET route, and john receives it.
func Example() {
	srv, err := chatserver.New(chatserver.Options{}) // a temporary store
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	site := httptest.NewServer(srv.Handler())
	defer site.Close()

	// curl -sN -H "Accept: text/event-stream" http://localhost:8000/john
	req, _ := http.NewRequest("GET", site.URL+"/john", nil)
	req.Header.Set("Accept", "text/event-stream")
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer stream.Body.Close()
	events := bufio.NewReader(stream.Body)
	readEvent := func() {
		for {
			line, _ := events.ReadString('\n')
			if line == "\n" {
				return
			}
			fmt.Println(strings.TrimRight(line, " \n")) // "now online: " ends in a space
		}
	}
	readEvent()
	readEvent()

	// ab -n 1 http://localhost:8000/msg/mary/john%20hello
	resp, err := http.Get(site.URL + "/msg/mary/john%20hello")
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	readEvent()

	// The same over JSON: POST /send.
	resp, err = http.Post(site.URL+"/send", "application/json", strings.NewReader(`{"from":"mary","to":"all","text":"hi all"}`))
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	readEvent()
	// Output:
	// id: 1
	// data: Welcome john!
	// id: 2
	// data: now online:
	// id: 4
	// data: mary: hello
	// id: 6
	// data: mary to all: hi all
}

// Mounting the chat under a prefix, as the playground does: the page uses
// relative URLs only, so it works at /chat/.
func ExampleServer_Handler() {
	srv, err := chatserver.New(chatserver.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	mux := http.NewServeMux()
	mux.Handle("/chat/", http.StripPrefix("/chat", srv.Handler()))
	site := httptest.NewServer(mux)
	defer site.Close()

	resp, err := http.Get(site.URL + "/chat") // redirected to /chat/
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Request.URL.Path, resp.Status, resp.Header.Get("Content-Type"))
	// Output:
	// /chat/ 200 OK text/html; charset=utf-8
}

// Running the chat alone, as `wasmgap chat` does: Serve answers until its
// context ends (here on SIGINT or SIGTERM), then drains and closes the store.
func ExampleServer_Serve() {
	srv, err := chatserver.New(chatserver.Options{DataDir: "data/chat"})
	if err != nil {
		log.Fatal(err)
	}
	ln, err := chatserver.Listen("localhost:8000") // 127.0.0.1 and ::1
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Serve(ctx, ln); err != nil {
		log.Fatal(err)
	}
}
