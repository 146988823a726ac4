//go:build linux

package main

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/wasmgap/wasmgap/internal/benchtool"
)

// peerFiles are the peer servers' sources.
//
//go:embed chat.php chat.js
var peerFiles embed.FS

// serverSpec is one server of the table.
type serverSpec struct {
	key      string // for -servers
	name     string // in the table
	program  string // the program it needs: "wasmgap", "nginx", "php" or "node"
	pageRuns bool   // measured on the page
	chat     bool   // measured on the message route
}

var serverSpecs = []serverSpec{
	{"wasmgap", "wasmgap chat", "wasmgap", true, true},
	{"wasmgap-no-fsync", "wasmgap chat --no-fsync", "wasmgap", false, true},
	// An older build (-baseline), durable, on the page and the message route: a change
	// before and after in one run.
	{"wasmgap-baseline", "wasmgap chat (-baseline build)", "wasmgap", true, true},
	{"nginx", "nginx (same page)", "nginx", true, false},
	{"php", "PHP chat (php-cli, stream_select)", "php", true, true},
	{"node", "Node chat (http module)", "node", true, true},
}

func specKeys() []string {
	var ks []string
	for _, s := range serverSpecs {
		ks = append(ks, s.key)
	}
	return ks
}

func specOf(key string) serverSpec {
	for _, s := range serverSpecs {
		if s.key == key {
			return s
		}
	}
	panic("unknown server " + key)
}

// server is a started server: its process group, URL and log.
type server struct {
	cmd *exec.Cmd
	url string // http://127.0.0.1:port
	// readyPath answers 200 once the server is ready: "/" (the page), Centrifugo's "/health".
	readyPath string
	logPath   string
	removeDir string        // removed once stopped, when set
	done      chan struct{} // closed when the process has exited
	stopped   sync.Once
}

// startServer starts spec on a free loopback port in dir (a temporary folder of its own)
// and waits until it answers GET /.
func startServer(ctx context.Context, o *options, spec serverSpec, dir string, page []byte) (*server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	addr, err := benchtool.FreeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	pagePath := filepath.Join(dir, "page.html")
	if page != nil {
		if err := os.WriteFile(pagePath, page, 0o644); err != nil {
			return nil, err
		}
	}
	var cmd *exec.Cmd
	switch spec.program {
	case "wasmgap":
		args := []string{"chat", "--addr", addr, "--data", filepath.Join(dir, "data"), "--send-rate", "-1"}
		if spec.key == "wasmgap-no-fsync" {
			args = append(args, "--no-fsync")
		}
		bin := o.wasmgap
		if spec.key == "wasmgap-baseline" {
			bin = o.baseline
		}
		cmd = exec.Command(bin, args...)
		cmd.Env = o.goServerEnv()
	case "nginx":
		conf, err := benchtool.NginxConf(dir, addr, "auto", page)
		if err != nil {
			return nil, err
		}
		// -e: the log of the start itself, before the configuration is read, goes to dir
		// too (the default under /var/log/nginx is not writable without root).
		cmd = exec.Command(o.nginx, "-e", filepath.Join(dir, "error.log"), "-c", conf, "-p", dir, "-g", "daemon off;")
	case "php", "node":
		file := map[string]string{"php": "chat.php", "node": "chat.js"}[spec.program]
		src, err := peerFiles.ReadFile(file)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, file), src, 0o644); err != nil {
			return nil, err
		}
		bin := map[string]string{"php": o.php, "node": o.node}[spec.program]
		cmd = exec.Command(bin, filepath.Join(dir, file), port, pagePath)
	default:
		return nil, fmt.Errorf("no way to start %s", spec.program)
	}
	return launch(ctx, cmd, spec.name, dir, "http://"+addr, "/")
}

// goServerEnv is the environment of a Go server: this process's, with -procs as its
// GOMAXPROCS when given.
func (o *options) goServerEnv() []string {
	env := os.Environ()
	if o.procs > 0 {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(o.procs))
	}
	return env
}

// procsNote says the Go servers' GOMAXPROCS, for a table's method line.
func (o *options) procsNote() string {
	if o.procs > 0 {
		return fmt.Sprintf("the Go servers run with GOMAXPROCS=%d (-procs)", o.procs)
	}
	return "the Go servers run with Go's default GOMAXPROCS (every core)"
}

// launch starts a server's cmd in dir, in a process group of its own, and waits until GET
// readyPath answers 200 at url.
func launch(ctx context.Context, cmd *exec.Cmd, name, dir, url, readyPath string) (*server, error) {
	s := &server{cmd: cmd, url: url, readyPath: readyPath, logPath: filepath.Join(dir, "server.log"), done: make(chan struct{})}
	logf, err := os.Create(s.logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = dir
	// A process group of its own: stopped as a whole (nginx's workers with their master),
	// and measured as a whole.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ctx, 15*time.Second); err != nil {
		s.stop()
		return nil, fmt.Errorf("%s: %w%s", name, err, s.logTail())
	}
	return s, nil
}

// waitReady waits until GET readyPath answers 200.
func (s *server) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: time.Second}
	for {
		select {
		case <-s.done:
			return errors.New("exited at start")
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := client.Get(s.url + s.readyPath)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET %s answered %s", s.readyPath, resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready on %s within %v: %v", s.url, limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *server) pgid() int { return s.cmd.Process.Pid }

// stop ends the server's process group: SIGTERM, then SIGKILL after 5 s.
func (s *server) stop() {
	s.stopped.Do(s.kill)
}

func (s *server) kill() {
	syscall.Kill(-s.pgid(), syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-s.pgid(), syscall.SIGKILL)
		<-s.done
	}
	// A worker that outlived its master (it should not) goes too.
	syscall.Kill(-s.pgid(), syscall.SIGKILL)
	if s.removeDir != "" {
		os.RemoveAll(s.removeDir)
	}
}

// logTail is the end of the server's log, for an error message.
func (s *server) logTail() string {
	b, _ := os.ReadFile(s.logPath)
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return ""
	}
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return "; its log: " + string(b)
}

// fetchPage starts a `wasmgap chat` and returns the bytes it serves at /.
func fetchPage(ctx context.Context, o *options, dir string) ([]byte, error) {
	s, err := startServer(ctx, o, specOf("wasmgap-no-fsync"), dir, nil)
	if err != nil {
		return nil, fmt.Errorf("start wasmgap chat for its page: %w", err)
	}
	defer s.stop()
	resp, err := http.Get(s.url + "/")
	if err != nil {
		return nil, fmt.Errorf("fetch the chat page: %w", err)
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || len(page) == 0 {
		return nil, fmt.Errorf("fetch the chat page: %s, %d bytes, %v", resp.Status, len(page), err)
	}
	return page, nil
}

// bench measures every selected server and returns the table's rows.
func bench(ctx context.Context, o *options, stderr io.Writer) ([]row, error) {
	tmp, err := os.MkdirTemp("", "bench-server-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// nginx's workers run as an unprivileged user: they must be able to reach their root.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	var page []byte
	for _, key := range o.servers {
		if spec := specOf(key); spec.program != "wasmgap" && o.missing[spec.program] == "" {
			if page, err = fetchPage(ctx, o, filepath.Join(tmp, "page")); err != nil {
				return nil, err
			}
			fmt.Fprintf(stderr, "bench-server: the chat page is %d bytes; nginx, PHP and Node serve the same\n", len(page))
			break
		}
	}
	// The servers, each with its rows to fill.
	type entry struct {
		spec  serverSpec
		srv   *server
		cells []*cell
	}
	var entries []*entry
	for _, key := range o.servers {
		spec := specOf(key)
		e := &entry{spec: spec}
		for _, r := range runsOf(o, spec) {
			c := &cell{row: row{server: spec.name, run: r}}
			if msg := o.missing[spec.program]; msg != "" {
				c.missing, c.done = msg, true
			}
			e.cells = append(e.cells, c)
		}
		entries = append(entries, e)
	}
	start := func(e *entry) {
		if e.cells[0].done || ctx.Err() != nil {
			return
		}
		fmt.Fprintf(stderr, "bench-server: start %s\n", e.spec.name)
		s, err := startServer(ctx, o, e.spec, filepath.Join(tmp, e.spec.key), page)
		if err != nil {
			for _, c := range e.cells {
				c.failure, c.done = err.Error(), true
			}
			return
		}
		e.srv = s
		for _, c := range e.cells {
			c.srv = s
		}
	}
	stop := func(e *entry) {
		for _, c := range e.cells {
			c.finish()
		}
		if e.srv != nil {
			e.srv.stop()
		}
	}
	defer func() {
		for _, e := range entries {
			stop(e) // for an early return; stop and finish run once
		}
	}()
	if o.interleave {
		// Every server at once, idle but for the one loaded; the runs go round the servers,
		// so that a busy machine's bad seconds fall on all of them alike.
		for _, e := range entries {
			start(e)
		}
		for rep := 0; rep < o.reps; rep++ {
			for _, e := range entries {
				for _, c := range e.cells {
					c.runOnce(ctx, o, rep, stderr)
				}
			}
		}
	} else {
		// One server after the other: each has the machine to itself.
		for _, e := range entries {
			start(e)
			for _, c := range e.cells {
				for rep := 0; rep < o.reps; rep++ {
					c.runOnce(ctx, o, rep, stderr)
				}
				c.finish()
			}
			stop(e)
		}
	}
	var rows []row
	for _, e := range entries {
		for _, c := range e.cells {
			c.finish()
			rows = append(rows, c.row)
		}
	}
	return rows, nil
}

// runKind is one load of the table: a tool, a path, a connection setting.
type runKind struct {
	key       string // the same for every server, for the ratios
	label     string
	tool      string // "ab", "wrk" or "load"
	path      string
	keepAlive bool
	message   bool // the message route, with a receiver
}

func runsOf(o *options, spec serverSpec) []runKind {
	n := strconv.Itoa(o.n)
	d := o.duration.String()
	var rs []runKind
	if spec.pageRuns {
		rs = append(rs,
			runKind{"ab-page", "ab -n " + n + " -c 10 / (no keep-alive)", "ab", "/", false, false},
			runKind{"wrk-page", "wrk -c 100 -d " + d + " / (keep-alive)", "wrk", "/", true, false},
			runKind{"load-page", "wasmgap load -c 100 -d " + d + " / (keep-alive)", "load", "/", true, false},
			runKind{"load-page-close", "wasmgap load -c 100 -d " + d + " --no-keepalive /", "load", "/", false, false},
		)
	}
	if spec.chat {
		rs = append(rs, runKind{"ab-msg", "ab -n " + n + " -c 10 /msg/mary/john%20hello, john on SSE", "ab", "/msg/mary/john%20hello", false, true})
	}
	return rs
}
