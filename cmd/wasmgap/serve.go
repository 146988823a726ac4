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
	"github.com/wasmgap/wasmgap/internal/custom"
	"github.com/wasmgap/wasmgap/internal/farm"
	"github.com/wasmgap/wasmgap/internal/httpguard"
	"github.com/wasmgap/wasmgap/internal/loadpage"
	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/playground"
	"github.com/wasmgap/wasmgap/web"
)

// Defaults of serve's HTTP server, as -h states them (the chat flags' defaults).
const (
	defaultReadHeaderTimeout = 10 * time.Second
	defaultIdleTimeout       = 120 * time.Second
	shutdownTimeout          = 15 * time.Second
)

// orDefault returns d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", serveAddr, "address to listen on (host:port)")
	dist := fs.String("dist", "", "serve the page from this folder (e.g. web/dist) instead of the bundle built into the binary")
	maxConcurrent := fs.Int("max-concurrent", 0, "runs at once (0 = one per CPU)")
	tb := runner.Bounds.Timeout
	timeout := fs.Duration(tb.Flag, time.Duration(tb.Default), "time limit of one execution of a run, setup included, and the longest a page may ask ("+tb.Range()+")")
	chatOptions := addChatFlags(fs, serveDataDir, stderr)
	verbose := fs.Bool("v", false, "log every chat connection")
	noCustom := fs.Bool("no-custom", false, "turn off user kernels (the page's \"Your kernel\" tab, POST /api/custom)")
	nativeCustom := fs.Bool("allow-native-custom", false, "also build user kernels natively and run them on the native engine, in a worker under the same limits: native code is confined by nothing else, so for local use only")
	customDir := fs.String("custom-dir", "", "folder of user kernels' builds and their Go build cache (default: the user cache folder's wasmgap/custom)")
	resultsDB := fs.String("results-db", "", resultsDBUsage+"; none stores nothing")
	resultsMaxBytes := fs.Int64("results-max-bytes", 0, resultsMaxBytesUsage)
	farmNATS := addNATSFlags(fs, "farm", "let the page send a Run's plan to a bench farm's agents through this NATS server, nats://host:port (POST /api/farm, docs/FARM.md); its results go to --results-db")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmgap serve [flags]\n\nServe the playground page, its API (/api/) and the panels beside it.\n\nflags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return exitf(stderr, 2, "wasmgap serve: unexpected arguments %q: serve takes flags only", fs.Args())
	}
	if *maxConcurrent < 0 {
		return exitf(stderr, 2, "wasmgap serve: -max-concurrent must not be negative")
	}
	if *farmNATS.url != "" {
		if err := farm.CheckURL(*farmNATS.url); err != nil {
			return exitf(stderr, 2, "wasmgap serve: --farm: %v", err)
		}
	}
	// The page's runs are checked against the one table: a limit outside it would refuse
	// every run.
	if err := tb.Check(int64(*timeout)); err != nil {
		return exitf(stderr, 2, "wasmgap serve: %s", flagError(err))
	}
	chatOpts, err := chatOptions(*verbose)
	if err != nil {
		return exitf(stderr, 2, "wasmgap serve: %v", err)
	}
	if chatOpts.ReadHeaderTimeout < 0 || chatOpts.IdleTimeout < 0 {
		return exitf(stderr, 2, "wasmgap serve: -read-header-timeout and -idle-timeout must not be negative (0 for the defaults, 10s and 120s)")
	}

	// One host allow-list and one body deadline for the playground, /chat/ and /load/ alike:
	// the chat flags --allow-host and --body-timeout.
	opts := playground.Options{MaxConcurrent: *maxConcurrent, Timeout: *timeout, BodyTimeout: chatOpts.BodyTimeout}
	if *farmNATS.url != "" {
		opts.Farm = &playground.FarmOptions{URL: *farmNATS.url, Auth: farmNATS.auth()}
	}
	page := web.Dist()
	if *dist != "" {
		if st, err := os.Stat(*dist); err != nil || !st.IsDir() {
			return exitf(stderr, 2, "wasmgap serve: -dist %s is not a folder", *dist)
		}
		page = os.DirFS(*dist)
		opts.Dist = page
	}
	if _, err := iofs.Stat(page, "manifest.json"); err != nil {
		fmt.Fprintln(stderr, "wasmgap serve: the page is not built (the API works): run `go tool task build`, then serve again")
	}

	// The stores are opened and checked before the server listens: a damaged one stops
	// the start, and no client is ever answered from it.
	store, ok := serveResults(*resultsDB, *resultsMaxBytes, stderr) // results.go
	if !ok {
		return 1
	}
	if store != nil {
		defer store.Close()
		opts.Results = store
	}
	// The panels beside the playground: the chat under /chat/, and the load generator
	// under /load/, whose runs may target this server alone.
	chat, err := chatserver.New(chatOpts)
	if err != nil {
		return exitf(stderr, 1, "wasmgap serve: %v", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		chat.Shutdown(context.Background())
		return exitf(stderr, 1, "wasmgap serve: %v", err)
	}
	opts.Chat = chat.Handler()
	opts.Load = loadpage.Handler(loadpage.Options{BaseURL: "http://" + ln.Addr().String(), ChatPath: "/chat/"})

	if !*noCustom {
		// User kernels: built to wasm on demand, run on the sandboxed engines only. The
		// first build fills the Go cache with the standard library for wasip1 (about
		// 30 s): do it now, in the background, at idle priority and stopped while a run
		// is measured (the playground's queue tells the builder), so that the server
		// never measures against its own warm-up.
		opts.Custom = custom.NewBuilder(custom.Options{Dir: *customDir, Native: *nativeCustom})
		go func() {
			if err := opts.Custom.Warm(context.Background()); err != nil {
				fmt.Fprintf(stderr, "wasmgap serve: user kernels will fail to build: %v\n", err)
			}
		}()
	}
	pg := playground.New(opts)
	// --trusted-proxy: every per-address limit (the chat's, the builds') counts clients.
	proxies, _ := httpguard.NewProxies(chatOpts.TrustedProxies, chatOpts.ProxyHeader) // checked by chatOptions
	// No ReadTimeout: it would also cut the chat's streams. The playground bounds the time
	// to read a request's body instead (playground.Options.BodyTimeout).
	srv := &http.Server{
		Handler:           proxies.Handler(httpguard.NewHosts(ln.Addr().String(), chatOpts.AllowedHosts).Handler(pg)),
		ReadHeaderTimeout: orDefault(chatOpts.ReadHeaderTimeout, defaultReadHeaderTimeout),
		IdleTimeout:       orDefault(chatOpts.IdleTimeout, defaultIdleTimeout),
		MaxHeaderBytes:    httpguard.MaxHeaderBytes,
	}
	fmt.Fprintf(stdout, "wasmgap playground on http://%s/ (chat store in %s; Ctrl-C or SIGTERM stops)\n", ln.Addr(), chatOpts.DataDir)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		chat.Shutdown(context.Background())
		return exitf(stderr, 1, "wasmgap serve: %v", err)
	case <-ctx.Done():
	}
	// The chat's streams never go idle: it tells them to resume elsewhere while the HTTP
	// server stops taking requests, as `wasmgap chat` does. Runs in progress are ended
	// (their workers killed, their clients told why) rather than waited for: one may take
	// longer than the shutdown's deadline.
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	var httpErr, chatErr, runsErr error
	var wg sync.WaitGroup
	wg.Go(func() { httpErr = srv.Shutdown(shutdown) })
	wg.Go(func() { chatErr = chat.Shutdown(shutdown) })
	wg.Go(func() { runsErr = pg.Shutdown(shutdown) })
	wg.Wait()
	if err := errors.Join(httpErr, chatErr, runsErr); err != nil {
		return exitf(stderr, 1, "wasmgap serve: shutdown: %v", err)
	}
	fmt.Fprintln(stdout, "playground stopped: runs in progress ended, every chat stream told to resume, store closed")
	return 0
}
