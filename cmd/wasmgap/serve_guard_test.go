package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startServe runs `wasmgap serve` on a free loopback port with a fresh store, plus args,
// and returns the process and its base URL ("http://127.0.0.1:PORT/").
func startServe(t *testing.T, args string) (proc *os.Process, base string, wait func() error) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "chat")
	cmd, line, out, _ := startSubcommand(t, "serve --addr 127.0.0.1:0 --data "+data+" "+args)
	go io.Copy(io.Discard, out)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd.Process, strings.Fields(line)[3], func() error { return <-done }
}

// startLongRun posts fib_rec(60), which runs for hours, and returns its event stream once
// the run has started in a worker.
func startLongRun(t *testing.T, base string) *bufio.Reader {
	t.Helper()
	resp, err := http.Post(base+"api/run", "application/json",
		strings.NewReader(`{"kernel":"fib_rec","engine":"native","args":{"n":60},"runs":1,"warmup":0}`))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST /api/run: %s %s", resp.Status, b)
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the run's stream ended before it started: %v", err)
		}
		if strings.Contains(line, `"type":"progress"`) {
			return br
		}
	}
}

// children returns the pids of the live processes whose parent is pid (Linux /proc).
func children(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc here:", err)
	}
	var kids []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, state, ok := procStat(child); ok && ppid == pid && state != "Z" {
			kids = append(kids, child)
		}
	}
	return kids
}

// procStat reads a process's parent and state from /proc/<pid>/stat.
func procStat(pid int) (ppid int, state string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b)[i+1:])
	if len(f) < 2 {
		return 0, "", false
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0], true
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	_, state, ok := procStat(pid)
	return ok && state != "Z"
}

// waitGone waits until none of pids runs, within limit.
func waitGone(t *testing.T, pids []int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("worker %d still runs %v after its server ended", pid, limit)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// kill -9 of `wasmgap serve` in the middle of a run: its worker goes too.
func TestServeKilledTakesItsWorker(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	proc, base, wait := startServe(t, "")
	startLongRun(t, base)
	workers := children(t, proc.Pid)
	if len(workers) == 0 {
		t.Fatal("no worker process under the server while a run goes")
	}
	proc.Kill()
	wait()
	waitGone(t, workers, 20*time.Second)
}

// SIGTERM of `wasmgap serve` in the middle of a run: the run ends with an error event
// saying why, the worker goes, and serve exits 0 well before the run would have ended.
func TestServeSIGTERMEndsRuns(t *testing.T) {
	proc, base, wait := startServe(t, "")
	stream := startLongRun(t, base)
	var workers []int
	if runtime.GOOS == "linux" {
		workers = children(t, proc.Pid)
	}
	proc.Signal(syscall.SIGTERM)
	rest, _ := io.ReadAll(stream)
	if !strings.Contains(string(rest), `"type":"error"`) || !strings.Contains(string(rest), "shutting down") {
		t.Errorf("the run's stream ended with %q, want an error event saying the server is shutting down", rest)
	}
	done := make(chan error, 1)
	go func() { done <- wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(30 * time.Second): // serve's own shutdown deadline is 15s
		t.Fatal("serve did not exit after SIGTERM")
	}
	waitGone(t, workers, 20*time.Second)
}

// -read-header-timeout and -idle-timeout, listed by -h, set serve's HTTP server: with
// them at 200ms, a connection that sends half its headers, or goes idle, is closed long
// before the 10s and 120s defaults.
func TestServeHonoursTimeoutFlags(t *testing.T) {
	_, base, _ := startServe(t, "-read-header-timeout 200ms -idle-timeout 200ms")
	addr := strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/")

	closedWithin := func(conn net.Conn, limit time.Duration) bool {
		conn.SetReadDeadline(time.Now().Add(limit))
		_, err := io.Copy(io.Discard, conn)
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
	half, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer half.Close()
	io.WriteString(half, "GET /api/kernels HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	if !closedWithin(half, 8*time.Second) {
		t.Error("a connection with half its headers is still open 8s later: -read-header-timeout is ignored")
	}

	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	io.WriteString(idle, "GET /api/kernels HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if !closedWithin(idle, 8*time.Second) {
		t.Error("an idle keep-alive connection is still open 8s later: -idle-timeout is ignored")
	}
}

// serve answers only to loopback Host names (a DNS name rebound to 127.0.0.1 is refused,
// for the playground, the chat and the load page alike), plus those of --allow-host.
func TestServeRefusesUnknownHosts(t *testing.T) {
	_, base, _ := startServe(t, "--allow-host play.example.org")
	status := func(host, path string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	port := base[strings.LastIndexByte(strings.TrimSuffix(base, "/"), ':'):]
	port = strings.TrimSuffix(port, "/")
	for _, path := range []string{"api/kernels", "chat/", "load/"} {
		if got := status("evil.example"+port, path); got != http.StatusForbidden {
			t.Errorf("Host evil.example, /%s: status %d, want 403", path, got)
		}
		for _, host := range []string{"localhost" + port, "127.0.0.1" + port, "play.example.org" + port} {
			if got := status(host, path); got != http.StatusOK {
				t.Errorf("Host %s, /%s: status %d, want 200", host, path, got)
			}
		}
	}
}
