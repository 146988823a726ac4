package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeCommands returns the command lines of the README's sh blocks, in order, without
// their trailing comments.
func readmeCommands(t *testing.T, readme string) []string {
	t.Helper()
	text, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	comment := regexp.MustCompile(`\s+#.*$`)
	var lines []string
	in := false
	for _, l := range strings.Split(string(text), "\n") {
		switch {
		case strings.HasPrefix(l, "```"):
			in = !in && strings.TrimPrefix(l, "```") == "sh"
		case in:
			if l = strings.TrimSpace(comment.ReplaceAllString(l, "")); l != "" {
				lines = append(lines, l)
			}
		}
	}
	return lines
}

// freeAddr returns a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestREADMECommandsInOrder runs the README's command lines in the order written: `go tool
// task` (which builds, then serves the playground), then every line of "Try it" in one
// shell, as a user would type them in a second terminal. `go tool task test` is CI's
// command (.ci/run), not run from a test. Two changes only, for a shared machine: the
// default ports 8080 and 8000 become free ones (--addr), and after a line that starts a
// server in the background the shell waits until it listens, as a user typing would.
func TestREADMECommandsInOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module and runs the README's commands (a few minutes): not with -short")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	lines := readmeCommands(t, filepath.Join(root, "README.md"))
	if len(lines) < 4 || lines[0] != "go tool task" || lines[1] != "go tool task test" {
		t.Fatalf("the README opens with %q; want `go tool task` and `go tool task test` first", lines[:min(2, len(lines))])
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil || !strings.Contains(string(ci), "\ngo tool task test\n") {
		t.Errorf(".ci/run does not run `go tool task test` (%v): the README's second command would go untested", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	work := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "bin"), filepath.Join(work, "bin")); err != nil {
		t.Fatal(err)
	}
	playground, chat := freeAddr(t), freeAddr(t)

	// go tool task: build what changed, then serve. Its chat store is where a user's would
	// be, data/serve-chat of the folder the next commands run in.
	task := exec.CommandContext(ctx, "go", "tool", "task", "--", "--addr", playground, "--data", filepath.Join(work, "data", "serve-chat"))
	task.Dir = root
	task.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	task.Cancel = func() error { return syscall.Kill(-task.Process.Pid, syscall.SIGKILL) }
	out, err := task.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var taskErr strings.Builder
	task.Stderr = &taskErr
	if err := task.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-task.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { task.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			syscall.Kill(-task.Process.Pid, syscall.SIGKILL)
		}
	})
	banner := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "wasmgap playground on http://") {
				banner <- sc.Text()
			}
		}
		close(banner)
	}()
	select {
	case l, ok := <-banner:
		if !ok {
			t.Fatalf("go tool task ended before serving:\n%s", taskErr.String())
		}
		t.Logf("go tool task: %s", l)
	case <-ctx.Done():
		t.Fatalf("go tool task served nothing in time:\n%s", taskErr.String())
	}

	// The rest, in one shell: background jobs and `kill %1` mean what they say.
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for _, l := range lines[2:] {
		l = strings.ReplaceAll(l, "127.0.0.1:8080", playground)
		l = strings.ReplaceAll(l, "127.0.0.1:8000", chat)
		if strings.HasPrefix(l, "go tool task") {
			t.Fatalf("%q: the README's task commands come first; the ones after them run against a built tree", l)
		}
		if strings.HasPrefix(l, "bin/wasmgap chat") {
			l = strings.Replace(l, "bin/wasmgap chat", "bin/wasmgap chat --addr "+chat, 1)
		}
		fmt.Fprintf(&script, "echo '$ %s'\n%s\n", strings.ReplaceAll(l, "'", `'\''`), l)
		if strings.HasPrefix(l, "bin/wasmgap chat") && strings.HasSuffix(l, "&") {
			fmt.Fprintf(&script, "for i in $(seq 200); do curl -s -o /dev/null http://%s/ && break; sleep 0.1; done\n", chat)
		}
		if strings.HasPrefix(l, "curl -sN") && strings.HasSuffix(l, "&") {
			script.WriteString("sleep 1\n") // the stream logs in
		}
	}
	sh := exec.CommandContext(ctx, "bash", "-c", script.String())
	sh.Dir = work
	said, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's commands failed: %v\n%s", err, said)
	}
	t.Logf("%s", said)
	for _, want := range []string{
		"fib_rec(27)",                  // bench's table
		"mary: hello",                  // the stream got ab's messages
		"Complete requests:      2000", // ab
		", 0 lost,",                    // load chat-send delivered every message
	} {
		if !strings.Contains(string(said), want) {
			t.Errorf("the commands' output lacks %q", want)
		}
	}
	// The chat and the playground ran side by side: both stores exist.
	for _, store := range []string{"data/chat/chat.db", "data/serve-chat/chat.db"} {
		if _, err := os.Stat(filepath.Join(work, store)); err != nil {
			t.Errorf("no %s: %v", store, err)
		}
	}
}
