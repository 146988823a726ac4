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
	"syscall"
	"time"

	"github.com/wasmgap/wasmgap/playground"
	"github.com/wasmgap/wasmgap/web"
)

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port)")
	dist := fs.String("dist", "", "serve the page from this folder (e.g. web/dist) instead of the bundle built into the binary")
	maxConcurrent := fs.Int("max-concurrent", 0, "runs at once (0 = one per CPU)")
	timeout := fs.Duration("timeout", 0, "time limit of one run, setup included (0 = 30s)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: wasmgap serve [flags]\n\nServe the playground page, its API (/api/) and the panels beside it.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
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
	// The panels beside the playground: set opts.Chat and opts.Load to their handlers
	// (mounted under /chat/ and /load/; the page shows a panel for each one set).

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "wasmgap serve: %v\n", err)
		return 1
	}
	srv := &http.Server{Handler: playground.New(opts), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "wasmgap playground on http://%s/\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "wasmgap serve: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		fmt.Fprintf(stderr, "wasmgap serve: shutdown: %v\n", err)
		return 1
	}
	return 0
}
