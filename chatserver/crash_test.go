package chatserver

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/store"
)

// TestMachineCrash simulates a crash of the machine at any point: the disk
// then holds chat.db as of its last sync (chat.db is written only by
// checkpoints, each one synced) and the log cut at any byte past its last
// sync. Every cut, at each record boundary and inside each record, opens,
// with every send answered before the cut (its record ends before it)
// present and nothing else. So does a crash between a checkpoint's commit
// and the emptying of the log (the log applied twice).
func TestMachineCrash(t *testing.T) {
	ts := startServer(t, Options{MailAckDelay: time.Millisecond})
	walPath := filepath.Join(ts.dir, "chat.wal")
	logSize := ts.logBytes
	send := func(i int) int64 {
		if status, body := ts.post(t, "mary", "bob", fmt.Sprint("kept ", i)); status != 200 || !strings.Contains(body, "offline") {
			t.Fatalf("send %d: %d %s", i, status, body)
		}
		return logSize() // the send's batch was alone: its record ends here
	}
	for i := range 5 {
		send(i)
	}
	ts.prune() // a checkpoint: chat.db synced, the log emptied
	if n := logSize(); n != store.FirstRecordAt {
		t.Fatalf("the log holds %d bytes after a checkpoint, want its header alone", n)
	}
	db1 := readFile(t, filepath.Join(ts.dir, "chat.db"))

	// bob logs in, gets the five (offered again under new ids), confirms
	// them (his mailbox is deleted) and leaves; five more wait for him.
	bob := ts.login(t, "sse", "bob")
	bob.expect("Welcome bob!", "now online: ")
	for i := range 5 {
		bob.expectOffline("mary", fmt.Sprint("kept ", i))
	}
	ts.waitMailbox(t, "bob", 0)
	dropped := logSize()
	bob.close()
	ts.waitStreams(t, "bob", -1)
	answered := map[int]int64{}
	for i := 5; i < 10; i++ {
		answered[i] = send(i)
	}
	log := readFile(t, walPath)
	if !bytes.Equal(readFile(t, filepath.Join(ts.dir, "chat.db")), db1) {
		t.Fatal("chat.db was written between two checkpoints: a machine crash could leave it half written")
	}
	if int64(len(log)) < answered[9] || len(bytes.TrimRight(log[answered[9]:], "\x00")) != 0 {
		t.Fatalf("the log holds %d bytes, the last send ended at %d, and the rest is not zeros", len(log), answered[9])
	}
	log = log[:answered[9]]

	// want is what bob's mailbox must hold when the log is cut at cut.
	want := func(cut int64) []string {
		var w []string
		if cut < dropped {
			for i := range 5 {
				w = append(w, fmt.Sprint("kept ", i))
			}
			return w
		}
		for i := 5; i < 10; i++ {
			if answered[i] <= cut {
				w = append(w, fmt.Sprint("kept ", i))
			}
		}
		return w
	}
	// The log's header is written whole before it replaces the old log
	// (a rename): a crash cuts records only.
	cuts := []int64{store.FirstRecordAt}
	for _, end := range recordEnds(t, log) {
		start := cuts[len(cuts)-1]
		cuts = append(cuts, start+1, start+7, (start+end)/2, end-1, end)
	}
	for _, cut := range cuts {
		got := openCopy(t, db1, log[:cut])
		if w := want(cut); !slices.Equal(got, w) {
			t.Fatalf("log cut at byte %d of %d: bob's mailbox holds %q, want %q", cut, len(log), got, w)
		}
	}

	// A crash after a checkpoint's commit, before the log was emptied.
	ts.prune()
	db2 := readFile(t, filepath.Join(ts.dir, "chat.db"))
	if got, w := openCopy(t, db2, log), want(int64(len(log))); !slices.Equal(got, w) {
		t.Fatalf("checkpointed chat.db with the log applied again: bob's mailbox holds %q, want %q", got, w)
	}

	// A server on a crash copy: bob gets the five that wait.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "chat.db"), db1)
	writeFile(t, filepath.Join(dir, "chat.wal"), log[:answered[7]+3])
	ts2 := startServer(t, Options{DataDir: dir})
	bob = ts2.login(t, "ws", "bob")
	bob.expect("Welcome bob!", "now online: ")
	for i := 5; i < 8; i++ {
		bob.expectOffline("mary", fmt.Sprint("kept ", i))
	}
}

// recordEnds returns the offset of the end of each record of a whole log.
func recordEnds(t *testing.T, log []byte) []int64 {
	t.Helper()
	var ends []int64
	for off := store.FirstRecordAt; off < len(log); {
		if len(log)-off < store.RecordHeaderBytes {
			t.Fatalf("log: a header cut short at %d", off)
		}
		off += store.RecordHeaderBytes + int(binary.LittleEndian.Uint32(log[off+store.LengthAt:]))
		ends = append(ends, int64(off))
	}
	return ends
}

// openCopy opens a store made of the given chat.db and log, as a machine
// crash would leave them, and returns the texts waiting for bob.
func openCopy(t *testing.T, db, log []byte) []string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "chat.db"), db)
	writeFile(t, filepath.Join(dir, "chat.wal"), log)
	st, state, err := store.Open(filepath.Join(dir, "chat.db"), true, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("log of %d bytes: %v", len(log), err)
	}
	defer st.Close()
	var texts []string
	_, err = st.Write(func(tx *store.Tx) error {
		entries, err := store.ReadMail(tx, "bob")
		for _, e := range entries {
			texts = append(texts, e.Mail.Text)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if state.Mailboxes["bob"] != len(texts) {
		t.Fatalf("log of %d bytes: bob's mailbox counted %d, holds %d", len(log), state.Mailboxes["bob"], len(texts))
	}
	return texts
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(b)
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
