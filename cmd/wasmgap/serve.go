package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/wasmgap/wasmgap/chatserver"
	"github.com/wasmgap/wasmgap/playground"
	"github.com/wasmgap/wasmgap/playground/loadpage"
	"github.com/wasmgap/wasmgap/web"
)

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port)")
	dist := fs.String("dist", "", "serve the page from this folder (e.g. web/dist) instead of the bundle built into the binary")
	maxConcurrent := fs.Int("max-concurrent", 0, "runs at once (0 = one per CPU)")
	timeout := fs.Duration("timeout", 0, "time limit of one run, setup included (0 = 30s)")
	chatOptions := addChatFlags(fs, stderr)
	verbose := fs.Bool("v", false, "log every chat connection")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: wasmgap serve [flags]\n\nServe the playground page, its API (/api/) and the panels beside it.\n\nflags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "wasmgap serve: unexpected arguments %q: serve takes flags only\n", fs.Args())
		return 2
	}
	if *maxConcurrent < 0 || *timeout < 0 {
		fmt.Fprintln(stderr, "wasmgap serve: -max-concurrent and -timeout must not be negative")
		return 2
	}

	opts := playground.Options{MaxConcurrent: *maxConcurrent, Timeout: *timeout}
	page := web.Dist()
	if *dist != "" {
		if st, err := os.Stat(*dist); err != nil || !st.IsDir() {
			fmt.Fprintf(stderr, "wasmgap serve: -dist %s is not a folder\n", *dist)
			return 2
		}
		page = os.DirFS(*dist)
		opts.Dist = page
	}
	if _, err := iofs.Stat(page, "manifest.json"); err != nil {
		fmt.Fprintln(stderr, "wasmgap serve: the page is not built (the API works): run `go tool task build`, then serve again")
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "wasmgap serve: %v\n", err)
		return 1
	}
	// The panels beside the playground: the chat under /chat/, and the load generator
	// under /load/, whose runs may target this server alone.
	chatOpts := chatOptions(*verbose)
	chat, err := chatserver.New(chatOpts)
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "wasmgap serve: %v\n", err)
		return 1
	}
	opts.Chat = chat.Handler()
	opts.Load = loadpage.Handler(loadpage.Options{BaseURL: "http://" + ln.Addr().String(), ChatPath: "/chat/"})

	srv := &http.Server{Handler: playground.New(opts), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	fmt.Fprintf(stdout, "wasmgap playground on http://%s/ (chat store in %s)\n", ln.Addr(), chatOpts.DataDir)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		chat.Shutdown(context.Background())
		fmt.Fprintf(stderr, "wasmgap serve: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	// The chat's streams never go idle: it tells them to resume elsewhere while the HTTP
	// server stops taking requests, as `wasmgap chat` does.
	shutdown, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var httpErr, chatErr error
	var wg sync.WaitGroup
	wg.Go(func() { httpErr = srv.Shutdown(shutdown) })
	wg.Go(func() { chatErr = chat.Shutdown(shutdown) })
	wg.Wait()
	if err := errors.Join(httpErr, chatErr); err != nil {
		fmt.Fprintf(stderr, "wasmgap serve: shutdown: %v\n", err)
		return 1
	}
	return 0
}
