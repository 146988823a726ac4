package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver"
)

// TestChatHelperProcess is not a test: run by TestChatSIGTERM as a child
// process, it stands in for the wasmgap command so that it can be signalled.
func TestChatHelperProcess(t *testing.T) {
	args := os.Getenv("WASMGAP_CHAT_HELPER")
	if args == "" {
		t.Skip("only runs as TestChatSIGTERM's child process")
	}
	os.Exit(run(strings.Fields(args), os.Stdout, os.Stderr))
}

// startSubcommand runs `wasmgap <args>` as a child process (this test binary, through
// TestChatHelperProcess) and returns it with the first line it printed, its banner.
func startSubcommand(t *testing.T, args string) (cmd *exec.Cmd, banner string, out *bufio.Reader, stderr *bytes.Buffer) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^TestChatHelperProcess$")
	cmd.Env = append(os.Environ(), "WASMGAP_CHAT_HELPER="+args)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr = new(bytes.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	out = bufio.NewReader(stdout)
	banner, err = out.ReadString('\n')
	if err != nil {
		t.Fatalf("wasmgap %s printed no banner: %v %s", args, err, stderr)
	}
	return cmd, banner, out, stderr
}

// checkSIGTERMDrains opens a chat stream at streamURL, sends the command SIGTERM, and checks
// that the stream is told to resume elsewhere, that the command exits 0 in time and says
// what it did: its last line of stdout is stopped, "<what> stopped: ...".
func checkSIGTERMDrains(t *testing.T, cmd *exec.Cmd, streamURL string, out *bufio.Reader, stderr *bytes.Buffer, stopped string) {
	t.Helper()
	req, _ := http.NewRequest("GET", streamURL, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if l, _ := br.ReadString('\n'); !strings.HasPrefix(l, "id: ") {
		t.Fatalf("stream starts with %q", l)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if rest, _ := io.ReadAll(br); !strings.Contains(string(rest), ": closed: the chat server is shutting down") {
		t.Errorf("the stream was not told why it closed: %q", rest)
	}
	done := make(chan error, 1)
	var said bytes.Buffer
	go func() { io.Copy(&said, out); done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr)
		}
		if !strings.HasPrefix(said.String(), stopped) {
			t.Errorf("after SIGTERM, stdout says %q; want a line starting %q", said.String(), stopped)
		}
	case <-time.After(20 * time.Second): // both commands drain within 15 s
		t.Fatalf("%s did not exit after SIGTERM", strings.Join(cmd.Args, " "))
	}
}

func TestChatFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--nope"}, 2, "flag provided but not defined"},
		{[]string{"extra"}, 2, "every setting is a flag"},
		{[]string{"--retention", "soon"}, 2, "invalid value"},
		{[]string{"--retention", "-1s", "--data", t.TempDir()}, 1, "must be 0 (default) or positive"},
		{[]string{"--addr", "256.0.0.1:1", "--data", t.TempDir()}, 1, "listen on 256.0.0.1:1"},
		// The address is checked first, before the store another chat may hold.
		{[]string{"--addr", "127.0.0.1:99999", "--data", lockedStore(t)}, 1, "127.0.0.1:99999"},
		{[]string{"--nats", "localhost:4222"}, 1, "is not a NATS server URL"},
		{[]string{"--nats", "nats://127.0.0.1:1"}, 1, "cannot connect to nats://127.0.0.1:1"},
	} {
		var out, errs bytes.Buffer
		code := runChat(tc.args, &out, &errs)
		if code != tc.code || !strings.Contains(errs.String()+out.String(), tc.says) {
			t.Errorf("chat %q: exit %d, stderr %q; want %d and %q", tc.args, code, errs.String(), tc.code, tc.says)
		}
	}
}

// TestChatSIGTERM runs `wasmgap chat`, opens a stream, sends SIGTERM: the
// stream is told to resume, the command exits 0, the store can be reopened.
func TestChatSIGTERM(t *testing.T) {
	data := filepath.Join(t.TempDir(), "chat")
	cmd, line, out, stderr := startSubcommand(t, "chat --addr 127.0.0.1:0 --data "+data)
	// "chat on http://127.0.0.1:PORT/ (store in ...)"
	url := strings.Fields(line)[2]
	checkSIGTERMDrains(t, cmd, url+"john", out, stderr, "chat stopped: ")
	if _, err := os.Stat(filepath.Join(data, "chat.db")); err != nil {
		t.Errorf("no store file: %v", err)
	}
}

// lockedStore returns a store folder that a chat of this process holds until the test ends,
// as a running `wasmgap chat` or `wasmgap serve` would.
func lockedStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	srv, err := chatserver.New(chatserver.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	if again, err := chatserver.New(chatserver.Options{DataDir: dir}); err == nil {
		again.Shutdown(context.Background())
		t.Fatal("a second chat opened a store the first one holds")
	}
	return dir
}

// TestChatAuthFlags: the flags of authentication and proxies, and `wasmgap
// chat token`, refuse what they cannot use and say why.
func TestChatAuthFlags(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("tooshort\n"), 0o600)
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte(strings.Repeat("s", 40)+"\n"), 0o600)
	t.Setenv(secretEnv, "")
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--auth", "--data", dir}, 2, "no token secret: give --auth-secret-file FILE or set $WASMGAP_CHAT_SECRET"},
		{[]string{"--auth", "--auth-secret-file", short, "--data", dir}, 2, "has 8 bytes: give at least 32"},
		{[]string{"--auth", "--auth-secret-file", filepath.Join(dir, "missing"), "--data", dir}, 2, "cannot be read"},
		{[]string{"--auth-secret-file", good, "--data", dir}, 2, "give --auth too"},
		{[]string{"--auth", "--auth-secret-file", good, "--claim-nicks", "--data", dir}, 2, "exclude each other"},
		{[]string{"--trusted-proxy", "proxy.example"}, 2, "neither a CIDR prefix"},
		{[]string{"--trusted-proxy", "10.0.0.0/8", "--proxy-header", "X-Real-IP", "--data", dir}, 2, "X-Forwarded-For or Forwarded"},
		{[]string{"token"}, 2, "give one nickname"},
		{[]string{"token", "bob"}, 2, "no token secret"},
		{[]string{"token", "--auth-secret-file", good, "all"}, 2, "reserved"},
		{[]string{"token", "--auth-secret-file", good, "bob", "--ttl", "0s"}, 2, "positive duration"},
		{[]string{"token", "--auth-secret-file", good, "bob", "alice"}, 2, "give one nickname"},
		{[]string{"token", "-h"}, 0, "wasmgap chat token [flags] NICK"},
	} {
		var out, errs bytes.Buffer
		code := runChat(tc.args, &out, &errs)
		if code != tc.code || !strings.Contains(errs.String()+out.String(), tc.says) {
			t.Errorf("chat %q: exit %d, stderr %q; want %d and %q", tc.args, code, errs.String(), tc.code, tc.says)
		}
	}
}

// TestChatAuth runs `wasmgap chat --auth` and logs in with a token that
// `wasmgap chat token` minted from the same secret (here the environment).
func TestChatAuth(t *testing.T) {
	t.Setenv(secretEnv, strings.Repeat("k", 48))
	var out, errs bytes.Buffer
	if code := runChat([]string{"token", "bob", "--ttl", "1h"}, &out, &errs); code != 0 {
		t.Fatalf("chat token: exit %d: %s", code, errs.String())
	}
	token := strings.TrimSpace(out.String())
	cmd, line, _, stderr := startSubcommand(t, "chat --auth --addr 127.0.0.1:0 --data "+filepath.Join(t.TempDir(), "chat"))
	defer cmd.Process.Kill()
	if !strings.Contains(line, "connection tokens") {
		t.Errorf("banner %q does not say the chat authenticates", line)
	}
	url := strings.Fields(line)[2]
	for _, tc := range []struct {
		query  string
		status int
	}{{"", 401}, {"?token=" + token, 200}} {
		req, _ := http.NewRequest("GET", url+"bob"+tc.query, nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("login as bob%s: %d, want %d (%s)", tc.query, resp.StatusCode, tc.status, stderr)
		}
	}
}
