package chatserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/wasmgap/wasmgap/chatserver/internal/auth"
	"github.com/wasmgap/wasmgap/chatserver/internal/store"
)

// TestMain runs a chat server instead of the tests when asked to by
// TestKill9KeepsAcknowledged: a process that test can kill -9.
func TestMain(m *testing.M) {
	if dir := os.Getenv("CHATSERVER_CHILD_DATA"); dir != "" {
		os.Exit(runChild(dir))
	}
	os.Exit(m.Run())
}

func runChild(dir string) int {
	srv, err := New(Options{DataDir: dir, LeaveGrace: -1, ClaimNicks: os.Getenv("CHATSERVER_CHILD_CLAIMS") != ""})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("listening", ln.Addr())
	srv.Serve(context.Background(), ln) // until killed
	return 0
}

// startChild runs a chat server in a child process on dir; env adds to
// its environment (CHATSERVER_CHILD_CLAIMS=1: nicknames are claimed).
func startChild(t *testing.T, dir string, env ...string) (*testServer, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "CHATSERVER_CHILD_DATA="+dir), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		t.Fatalf("child chat server: %q %v", line, err)
	}
	go io.Copy(io.Discard, out)
	return &testServer{url: "http://" + addr, dir: dir}, cmd
}

// TestKill9KeepsAcknowledged: every message answered before the server
// process is killed with SIGKILL is there after a restart: offline messages
// in their mailbox, a message to all in the history a resume replays.
func TestKill9KeepsAcknowledged(t *testing.T) {
	dir := t.TempDir()
	ts, cmd := startChild(t, dir)
	joe := ts.login(t, "sse", "joe")
	joe.expect("Welcome joe!", "now online: ")
	seen := strconv.FormatUint(joe.lastID, 10)
	joe.close()
	const n = 200
	for i := range n {
		if status, body := ts.post(t, "mary", "bob", fmt.Sprint("kept ", i)); status != 200 || !strings.Contains(body, "offline") {
			t.Fatalf("send %d: %d %s", i, status, body)
		}
	}
	if status, body := ts.msg(t, "mary", "all", "last words"); status != 200 {
		t.Fatalf("send to all: %d %s", status, body)
	}
	// Answered: now kill the server without a chance to write anything.
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if fi, err := os.Stat(filepath.Join(dir, "chat.wal")); err != nil || fi.Size() == 0 {
		t.Fatalf("the log holds nothing after the kill (%v): the test did not test recovery", err)
	}

	ts2, _ := startChild(t, dir)
	bob := ts2.login(t, "ws", "bob")
	bob.expect("Welcome bob!", "now online: ")
	for i := range n {
		bob.expectOffline("mary", fmt.Sprint("kept ", i))
	}
	again := ts2.resume(t, "sse", "joe", seen)
	for {
		e := again.next()
		if e.text == "mary to all: last words" {
			break
		}
	}
}

// crashCopy copies the store files of a running server, as a kill -9 would
// leave them (the server is idle: its last batch is written).
func crashCopy(t *testing.T, ts *testServer) string {
	t.Helper()
	ts.mailbox("nobody") // a batch through the hub: the earlier ones are done
	dst := t.TempDir()
	for _, name := range []string{"chat.db", "chat.wal"} {
		b, err := os.ReadFile(filepath.Join(ts.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestLogDamage: a log cut short at its end (a crash during a write, never
// acknowledged) is recovered up to its last whole record, with a warning; a
// record damaged with more after it refuses the store with a clear error.
func TestLogDamage(t *testing.T) {
	ts := startServer(t, Options{})
	for i := range 20 {
		if status, body := ts.post(t, "mary", "bob", fmt.Sprint("kept ", i)); status != 200 {
			t.Fatalf("send: %d %s", status, body)
		}
	}
	snap := crashCopy(t, ts)
	wal := filepath.Join(snap, "chat.wal")
	good, _ := os.ReadFile(wal)
	good = good[:ts.logBytes()] // the records, not the zeros the file is filled with past them

	// Cut short: the last record loses its tail.
	torn := t.TempDir()
	copyStore(t, snap, torn)
	os.WriteFile(filepath.Join(torn, "chat.wal"), good[:len(good)-5], 0o600)
	var logs syncBuffer
	ts2 := startServer(t, Options{DataDir: torn, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if !strings.Contains(logs.String(), "cut short") {
		t.Errorf("no warning about the torn record: %s", logs.String())
	}
	bob := ts2.login(t, "sse", "bob")
	bob.expect("Welcome bob!", "now online: ")
	for i := range 19 {
		bob.expectOffline("mary", fmt.Sprint("kept ", i))
	}

	// Damaged in the middle: refused, naming the file and the offset.
	bad := t.TempDir()
	copyStore(t, snap, bad)
	b := append([]byte(nil), good...)
	b[store.FirstRecordAt+30] ^= 0xff // in the first record's changes
	os.WriteFile(filepath.Join(bad, "chat.wal"), b, 0o600)
	_, err := New(Options{DataDir: bad})
	if !errors.Is(err, ErrStoreDamaged) || !strings.Contains(err.Error(), "chat.wal") || !strings.Contains(err.Error(), "whole records follow") {
		t.Fatalf("damaged log: %v", err)
	}
	t.Log(err)

	// A bit flipped in the first record's length, which then runs past the
	// end of the log: refused too, never taken for a torn end (that would
	// drop every acknowledged send after it).
	flipped := t.TempDir()
	copyStore(t, snap, flipped)
	b = append([]byte(nil), good...)
	b[store.FirstRecordAt+store.LengthAt+3] ^= 0x40
	os.WriteFile(filepath.Join(flipped, "chat.wal"), b, 0o600)
	srv, err := New(Options{DataDir: flipped})
	if err == nil {
		srv.Shutdown(context.Background())
	}
	if !errors.Is(err, ErrStoreDamaged) || !strings.Contains(err.Error(), "chat.wal") || !strings.Contains(err.Error(), fmt.Sprintf("at byte %d ", store.FirstRecordAt)) {
		t.Fatalf("a record's length damaged: %v", err)
	}
}

func copyStore(t *testing.T, from, to string) {
	t.Helper()
	for _, name := range []string{"chat.db", "chat.wal"} {
		b, err := os.ReadFile(filepath.Join(from, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKill9KeepsClaims: a nickname claimed before the server was killed
// with SIGKILL is still claimed after the restart, whether its stream was
// open at the kill or closed before it: a stranger's login as it is
// refused (403), its owner's, showing the secret, welcomed.
func TestKill9KeepsClaims(t *testing.T) {
	dir := t.TempDir()
	const claims = "CHATSERVER_CHILD_CLAIMS=1"
	ts, cmd := startChild(t, dir, claims)
	secrets := map[string]string{}
	var open *client
	for _, nick := range []string{"bob", "ann"} {
		status, body, h, c := ts.sseLogin(t, nick, "", nil)
		if status != 200 || h.Get(auth.ClaimHeader) == "" {
			t.Fatalf("%s's first login: %d %s, claim %q", nick, status, body, h.Get(auth.ClaimHeader))
		}
		secrets[nick] = h.Get(auth.ClaimHeader)
		c.expect("Welcome " + nick + "!")
		if nick == "bob" {
			c.close() // bob's stream closes before the kill, ann's is open at it
		} else {
			open = c
		}
	}
	if status, body := ts.msg(t, "mary", "bob", "for bob alone"); status != 200 {
		t.Fatalf("send to bob: %d %s", status, body)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	open.close()

	ts2, _ := startChild(t, dir, claims)
	for _, nick := range []string{"bob", "ann"} {
		if status, body, _, c := ts2.sseLogin(t, nick, "last_event_id=0", nil); status != 403 {
			if c != nil {
				c.close()
			}
			t.Fatalf("a stranger's login as %s after the restart: %d %q, want 403: the claim is %s's", nick, status, body, nick)
		}
		status, body, _, c := ts2.sseLogin(t, nick, "", http.Header{auth.ClaimHeader: {secrets[nick]}})
		if status != 200 {
			t.Fatalf("%s's login with the claim after the restart: %d %s", nick, status, body)
		}
		c.close()
	}
}

// TestKill9IDsOnlyGrow: event ids are reserved in the store a block at a
// time, and a login stores nothing of its own (its welcome's ids are
// reserved), yet ids only grow across a kill -9: killed after a few
// logins, and again after logins that crossed into a new block, the
// server's first id after the restart is above every id handed out before.
// The logins within a block leave the log as it was (no record, no sync).
func TestKill9IDsOnlyGrow(t *testing.T) {
	dir := t.TempDir()
	walPath := filepath.Join(dir, "chat.wal")
	logSize := func() int { // where the log's records end: the file is filled with zeros past them
		return len(bytes.TrimRight(readFile(t, walPath), "\x00"))
	}
	// relogins logs joe in on a second stream (joe stays online on his
	// first, so nobody is told of a join or a leave) until the ids handed
	// out reach until, then more times; it returns the last id seen and
	// how many logins grew the log.
	relogins := func(ts *testServer, until uint64, more int) (last uint64, grew int) {
		for i := 0; i <= 2*store.IDBlock && more > 0; i++ {
			before := logSize()
			c := ts.login(t, "ws", "joe")
			c.expect("Welcome joe!", "now online: joe")
			last = c.lastID
			c.close()
			if logSize() != before {
				grew++
			}
			if last >= until {
				more--
			}
		}
		return last, grew
	}
	ts, cmd := startChild(t, dir)
	joe := ts.login(t, "ws", "joe")
	joe.expect("Welcome joe!", "now online: ")
	last, grew := relogins(ts, 0, 5)
	if grew != 0 {
		t.Errorf("5 logins within the first block grew the log %d times; want none", grew)
	}
	for round, cross := range []bool{false, true} {
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		joe.close()
		ts, cmd = startChild(t, dir)
		joe = ts.login(t, "ws", "joe")
		if w := joe.next(); w.text != "Welcome joe!" || w.id <= last {
			t.Fatalf("round %d: after a kill -9, the first event is %d %q after %d: ids must grow", round, w.id, w.text, last)
		}
		joe.expect("now online: ")
		if cross {
			break
		}
		// Into the next block and 5 logins past its reservation.
		first := joe.lastID
		last, grew = relogins(ts, first+store.IDBlock, 5)
		if grew < 1 || grew > 2 {
			t.Errorf("logins from id %d to %d grew the log %d times; want once per block crossed", first, last, grew)
		}
	}
}
