//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/gotool"
)

// wasmgapBin is the wasmgap binary built from this tree for the tests.
var wasmgapBin string

func TestMain(m *testing.M) {
	serveFloorIfAsked() // the fan-out mode starts this binary as the floor
	dir, err := os.MkdirTemp("", "bench-server-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	wasmgapBin = filepath.Join(dir, "wasmgap")
	// The page is embedded from chatserver; the playground's bundles have placeholders in a
	// fresh clone, which is enough for `wasmgap chat`.
	build := exec.Command("go", "build", "-o", wasmgapBin, "./cmd/wasmgap")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build ./cmd/wasmgap: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needPeers skips the test, naming the packages to install, when a peer or a tool is absent.
func needPeers(t *testing.T) {
	t.Helper()
	var absent, pkgs []string
	for _, p := range []struct{ name, pkg string }{
		{"php", "php-cli"}, {"node", "nodejs"}, {"nginx", "nginx-light"}, {"wrk", "wrk"}, {"ab", "apache2-utils"},
	} {
		if _, err := lookPath(p.name); err != nil {
			absent = append(absent, p.name)
			pkgs = append(pkgs, p.pkg)
		}
	}
	if len(absent) > 0 {
		t.Skipf("%s not installed: apt-get install %s", strings.Join(absent, ", "), strings.Join(pkgs, " "))
	}
}

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "5"}, "-n 5: at least 10"},
		{[]string{"-d", "0s"}, "allowed 1s to 10m"},
		{[]string{"-d", "1500ms"}, "whole seconds"},
		{[]string{"-reps", "0"}, "-reps 0: allowed 1 to 100"},
		{[]string{"-procs", "-1"}, "-procs -1: allowed 0 (Go's default) to"},
		{[]string{"-procs", "100000"}, "-procs 100000: allowed 0 (Go's default) to"},
		{[]string{"-servers", "php,apache"}, `unknown server "apache": allowed wasmgap, wasmgap-no-fsync, wasmgap-baseline, nginx, php, node`},
		{[]string{"-servers", "wasmgap-baseline,nginx"}, "give the older binary with -baseline"},
		{[]string{"-baseline", "/nonexistent/wasmgap"}, "-baseline /nonexistent/wasmgap"},
		{[]string{"extra"}, "every setting is a flag"},
		{[]string{"-nope"}, "flag provided but not defined"},
		{[]string{"-wasmgap", "/nonexistent/wasmgap"}, "go build -o bin/wasmgap ./cmd/wasmgap"},
		{[]string{"-fanout", "10", "-servers", "wasmgap,nginx"}, `-fanout: server "nginx": allowed wasmgap, centrifugo`},
		{[]string{"-fanout", "100001"}, "-fanout 100001: allowed 1 to"},
		{[]string{"-fanout", "10", "-broadcast-rate", "0"}, "-broadcast-rate 0: allowed above 0"},
		{[]string{"-fanout", "10", "-churn-time", "10m"}, "-churn-time 10m0s: allowed 1s to 5m"},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("run %q: exit %d, stderr %q; want a failure saying %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// TestProcsReachTheGoServers: -procs is the GOMAXPROCS of every Go server's environment, the
// last of its entries (the one a Go program takes); without it the environment is this one's.
func TestProcsReachTheGoServers(t *testing.T) {
	t.Setenv("GOMAXPROCS", "7")
	o := &options{procs: 1}
	if env := o.goServerEnv(); env[len(env)-1] != "GOMAXPROCS=1" {
		t.Errorf("-procs 1: the environment ends %q, want GOMAXPROCS=1", env[len(env)-1])
	}
	o.procs = 0
	if env := o.goServerEnv(); !slices.Contains(env, "GOMAXPROCS=7") || slices.Contains(env, "GOMAXPROCS=1") {
		t.Errorf("no -procs: the environment is not this process's: %q", env)
	}
}

// TestMissingProgram: a program that is not installed gives rows that say so, and the run
// goes on.
func TestMissingProgram(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"-wasmgap", wasmgapBin, "-servers", "php,nginx", "-php", "/nonexistent/php", "-nginx", "/nonexistent/nginx",
		"-n", "10", "-d", "1s", "-reps", "1"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"php not installed: apt-get install php-cli", "nginx not installed: apt-get install nginx-light"} {
		// Each run of the server is a row saying so (5 for PHP, 4 for nginx), and the header.
		if n := strings.Count(out.String(), want); n < 4 {
			t.Errorf("%q appears %d times in\n%s", want, n, out.String())
		}
	}

	// A missing load tool: the server is started, its row names the tool.
	out.Reset()
	code = run([]string{"-wasmgap", wasmgapBin, "-servers", "wasmgap-no-fsync", "-ab", "/nonexistent/ab", "-n", "10", "-d", "1s", "-reps", "1"}, &out, &errb)
	if want := "ab not installed: apt-get install apache2-utils"; code != 0 || strings.Count(out.String(), want) != 2 {
		t.Errorf("exit %d; want a row (and the header line) saying %q in\n%s\n%s", code, want, out.String(), errb.String())
	}
}

// TestBenchEveryServer runs the whole benchmark at small sizes: every row must be filled,
// and the message route must have delivered every message, for every server.
func TestBenchEveryServer(t *testing.T) {
	needPeers(t)
	checkBench(t, "-n", "200", "-d", "1s", "-reps", "1")
}

// TestBenchInterleaved: the same with every server started at once and two runs going
// round them, on two servers.
func TestBenchInterleaved(t *testing.T) {
	needPeers(t)
	checkBench(t, "-n", "100", "-d", "1s", "-reps", "2", "-interleave", "-servers", "wasmgap-no-fsync,php")
}

// checkBench runs bench with args and checks that every row of every server is filled and
// that each message route delivered every message.
func checkBench(t *testing.T, args ...string) {
	t.Helper()
	o, code, err := parseOptions(append([]string{"-wasmgap", wasmgapBin}, args...), io.Discard)
	if err != nil {
		t.Fatalf("options: exit %d: %v", code, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log bytes.Buffer
	rows, err := bench(ctx, o, &log)
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, log.String())
	}
	var table bytes.Buffer
	printTable(&table, o, nil, rows)
	t.Logf("\n%s", table.String())

	want := map[string]int{} // server name → rows
	messages := 0
	for _, key := range o.servers {
		spec := specOf(key)
		want[spec.name] = len(runsOf(o, spec))
		if spec.chat {
			messages++
		}
	}
	for _, r := range rows {
		want[r.server]--
		switch {
		case r.missing != "":
			t.Errorf("%s, %s: %s, though every program is installed", r.server, r.run.label, r.missing)
		case r.failure != "":
			t.Errorf("%s, %s: failed: %s", r.server, r.run.label, r.failure)
		case len(r.rps) != o.reps || slices.Min(r.rps) <= 0 || r.requests <= 0 || r.rssPeak <= 0:
			t.Errorf("%s, %s: not filled: %+v", r.server, r.run.label, r)
		}
		if r.run.message {
			messages--
			if sent := int64(o.n * o.reps); r.sent != sent || r.delivered != r.sent {
				t.Errorf("%s: john received %d of %d messages answered (ab sent %d)", r.server, r.delivered, r.sent, sent)
			}
		}
	}
	for name, n := range want {
		if n != 0 {
			t.Errorf("%s: %d rows missing from the table", name, n)
		}
	}
	if messages != 0 {
		t.Errorf("%d message-route rows missing", messages)
	}
}

// TestPeersSpeakTheArticle: the PHP and Node chats send the texts `wasmgap chat` sends, in
// the same order, for a private message, a message to all, an offline message delivered at
// login, a join notice and a user's second connection.
func TestPeersSpeakTheArticle(t *testing.T) {
	needPeers(t)
	o, _, err := parseOptions([]string{"-wasmgap", wasmgapBin}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	date := regexp.MustCompile(`\(\d{4}-\d\d-\d\d \d\d:\d\d\)`)
	for _, key := range []string{"wasmgap-no-fsync", "php", "node"} {
		t.Run(key, func(t *testing.T) {
			s, err := startServer(ctx, o, specOf(key), t.TempDir(), []byte("<html>page</html>"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.stop()
			send := func(path string) {
				t.Helper()
				resp, err := http.Get(s.url + path)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
					t.Fatalf("GET %s: %s %q; want 200 \"ok\\n\"", path, resp.Status, body)
				}
			}
			john := listen(ctx, t, s.url, "john")
			john.expect(t, "Welcome john!", "now online: ")
			send("/msg/mary/bob%20hi")
			send("/msg/mary/john%20hello")
			send("/msg/mary/all%20everyone")
			john.expect(t, "mary: hello", "mary to all: everyone")
			bob := listen(ctx, t, s.url, "bob")
			bob.expect(t, "Welcome bob!", "now online: john")
			if line := bob.next(t); date.ReplaceAllString(line, "(date)") != "mary (date): hi" {
				t.Fatalf("bob's offline message: %q; want \"mary (YYYY-MM-DD HH:MM): hi\"", line)
			}
			john.expect(t, "bob has joined.")
			send("/msg/john/bob%20yo")
			bob.expect(t, "john: yo")
			john.expect(t, "You to bob: yo")

			// A second connection of john: no join notice, and both get his messages.
			john2 := listen(ctx, t, s.url, "john")
			john2.expect(t, "Welcome john!", "now online: bob, john")
			send("/msg/bob/john%20both")
			john.expect(t, "bob: both")
			john2.expect(t, "bob: both")
			bob.expect(t, "You to john: both") // and not "john has joined."

			// The leave notice when bob's last connection closes (wasmgap chat waits for a
			// reconnect for 5 s first: not checked there).
			if key != "wasmgap-no-fsync" {
				bob.close()
				john.expect(t, "bob has left.")
				john2.expect(t, "bob has left.")
			}
		})
	}
}

// stream is a user logged in over SSE whose "data:" lines arrive on lines.
type stream struct {
	nick  string
	lines chan string
	close context.CancelFunc // logs out
}

func listen(ctx context.Context, t *testing.T, base, nick string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/"+nick, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatalf("log %s in: %v", nick, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("log %s in: %s", nick, resp.Status)
	}
	s := &stream{nick: nick, lines: make(chan string, 100), close: cancel}
	go func() {
		defer resp.Body.Close()
		defer close(s.lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if text, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				s.lines <- text
			}
		}
	}()
	return s
}

// next is the stream's next line; a stream silent for 10 s fails the test (a bound, not a
// measurement).
func (s *stream) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			t.Fatalf("%s's stream ended", s.nick)
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatalf("%s's stream: nothing within 10 s", s.nick)
	}
	return ""
}

func (s *stream) expect(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		if got := s.next(t); got != w {
			t.Fatalf("%s received %q; want %q", s.nick, got, w)
		}
	}
}

// TestFanoutBesideCentrifugo runs the fan-out mode at small sizes against the chat, the floor
// and a real Centrifugo (built by `go run ./scripts/peer-tools centrifugo`; CI does; without
// it, the chat and the floor): every row is filled, every broadcast reached every receiver
// exactly once on each server and transport (the floor's frames too), the chat's p99 and CPU
// are given as multiples of the floor's, and every churn login was welcomed.
func TestFanoutBesideCentrifugo(t *testing.T) {
	cfName := "Centrifugo " + gotool.Centrifugo.Version
	args := []string{"-wasmgap", wasmgapBin, "-fanout", "40", "-broadcasts", "3", "-broadcast-rate", "20",
		"-churn", "40", "-churn-time", "1s", "-reps", "1", "-procs", "1", "-markdown"}
	servers := []string{"wasmgap chat", "floor (writes only)", cfName}
	if cf, ok := gotool.Centrifugo.Installed(); ok {
		args = append(args, "-centrifugo", cf)
	} else if os.Getenv("PEERS_REQUIRED") != "" {
		t.Fatalf("centrifugo %s is not in the tools' cache: go run ./scripts/peer-tools centrifugo", gotool.Centrifugo.Version)
	} else {
		t.Logf("centrifugo %s is not in the tools' cache (go run ./scripts/peer-tools centrifugo builds it, about 4 min): the chat alone", gotool.Centrifugo.Version)
		args, servers = append(args, "-servers", "wasmgap,floor"), servers[:2]
	}
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "the Go servers run with GOMAXPROCS=1 (-procs)") {
		t.Errorf("the table does not say the servers' GOMAXPROCS of -procs 1:\n%s", out.String())
	}
	t.Log(out.String())
	rows := map[string][]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if cells := strings.Split(strings.Trim(l, "| "), " | "); len(cells) >= 5 && strings.HasPrefix(l, "| ") {
			rows[cells[0]+" "+cells[1]] = cells
		}
	}
	for _, key := range servers {
		for _, tr := range []string{" ws", " sse"} {
			r := rows[key+tr]
			// … delivered / expected, lost, duplicated: 120 / 120, 0, 0; a delivery p99 measured.
			if n := len(r); n != 10 || r[n-3] != "120 / 120" || r[n-2] != "0" || r[n-1] != "0" || strings.HasPrefix(r[3], "0.000") {
				t.Errorf("row %s: %q: want 120 / 120 delivered, 0 lost, 0 duplicated, a delivery p99", key+tr, r)
			}
			// The floor's CPU can be under a clock tick at this size: no multiple of it then.
			if f := rows["floor (writes only)"+tr]; key == "wasmgap chat" && len(r) == 10 && len(f) == 10 &&
				(!strings.HasSuffix(r[3], "×)") || !strings.HasPrefix(f[4], "<") && !strings.HasSuffix(r[4], "×)")) {
				t.Errorf("row %s: %q: want the p99 and CPU as multiples of the floor's (%q)", key+tr, r, f)
			}
		}
		if key == "floor (writes only)" {
			if _, ok := rows[key+" 40"]; ok || strings.Count(out.String(), "| floor") != 2 {
				t.Errorf("the floor has %d rows, want its two fan-out rows only:\n%s", strings.Count(out.String(), "| floor"), out.String())
			}
			continue
		}
		if r := rows[key+" 40"]; len(r) != 6 || r[2] != "0" || strings.HasPrefix(r[4], "0.000") {
			t.Errorf("churn row %s: %q: want 40 connections, 0 errors, a connect p99", key+" 40", r)
		}
	}
}
