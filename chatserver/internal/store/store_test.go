package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// filled opens a store in a new folder and writes n batches, each an event
// and a mail for bob; it returns the open store.
func filled(t *testing.T, n int) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	st, _, err := Open(filepath.Join(dir, "chat.db"), true, quiet)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if _, err := st.Write(func(tx *Tx) error {
			if err := ReserveIDs(tx, uint64(i)); err != nil {
				return err
			}
			if err := PutRecord(tx, &Record{ID: uint64(i), Time: time.Now().UnixNano(), Text: fmt.Sprint("event ", i)}); err != nil {
				return err
			}
			return AddMail(tx, "bob", &Mail{From: "mary", Text: fmt.Sprint("mail ", i), Time: time.Now().UnixNano()})
		}); err != nil {
			t.Fatal(err)
		}
	}
	return st, dir
}

// copyWith makes a folder holding dir's chat.db and log as the log.
func copyWith(t *testing.T, dir string, log []byte) string {
	t.Helper()
	to := t.TempDir()
	db, err := os.ReadFile(filepath.Join(dir, "chat.db"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"chat.db": db, "chat.wal": log} {
		if err := os.WriteFile(filepath.Join(to, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// mailsOf opens the store in dir and returns bob's mails' texts.
func mailsOf(t *testing.T, dir string) ([]string, error) {
	t.Helper()
	st, state, err := Open(filepath.Join(dir, "chat.db"), true, quiet)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var texts []string
	_, err = st.Write(func(tx *Tx) error {
		entries, err := ReadMail(tx, "bob")
		for _, e := range entries {
			texts = append(texts, e.Mail.Text)
		}
		return err
	})
	if err == nil && state.Mailboxes["bob"] != len(texts) {
		t.Fatalf("bob's mailbox counted %d, holds %d", state.Mailboxes["bob"], len(texts))
	}
	return texts, err
}

// recordStarts returns the offset of each record of a whole log.
func recordStarts(t *testing.T, log []byte) []int {
	t.Helper()
	var starts []int
	for off := walFileHeader; off < len(log); off += walHeader + int(binary.LittleEndian.Uint32(log[off+lengthAt:])) {
		starts = append(starts, off)
	}
	return starts
}

// TestLogLengthDamaged: a bit flipped in the length of any record, the
// last one too, refuses the store, naming the log, the offset and what to
// do, where a log cut inside its last record opens without it.
func TestLogLengthDamaged(t *testing.T) {
	st, dir := filled(t, 6)
	defer st.Close()
	log, err := os.ReadFile(filepath.Join(dir, "chat.wal"))
	if err != nil {
		t.Fatal(err)
	}
	starts := recordStarts(t, log)
	if len(starts) != 6 {
		t.Fatalf("%d records, want 6", len(starts))
	}
	for i, off := range starts {
		for _, bit := range []int{0, 3, 9, 17, 30, 31} {
			b := bytes.Clone(log)
			b[off+lengthAt+bit/8] ^= 1 << (bit % 8)
			texts, err := mailsOf(t, copyWith(t, dir, b))
			msg := fmt.Sprint(err)
			if !errors.Is(err, ErrDamaged) || !strings.Contains(msg, "chat.wal") || !strings.Contains(msg, fmt.Sprintf("at byte %d ", off)) || !strings.Contains(msg, "mv ") {
				t.Fatalf("record %d of 6, bit %d of its length flipped: opened with %d mails (%v); want the log refused at byte %d", i+1, bit, len(texts), err, off)
			}
		}
	}

	last := starts[len(starts)-1]
	for _, cut := range []int{last + 1, last + walHeader, last + walHeader + 3, len(log) - 1} {
		texts, err := mailsOf(t, copyWith(t, dir, log[:cut]))
		if err != nil || len(texts) != 5 {
			t.Fatalf("log cut at %d of %d, inside its last record: %d mails, %v; want the 5 before it", cut, len(log), len(texts), err)
		}
	}
}

// TestCheckpointedStoreMissing: once a store was created, its chat.db
// missing or emptied (its log still there) is refused, never taken for a
// new empty store.
func TestCheckpointedStoreMissing(t *testing.T) {
	st, dir := filled(t, 3)
	if err := st.Close(); err != nil { // a checkpoint: the mails are in chat.db, the log empty
		t.Fatal(err)
	}
	db := filepath.Join(dir, "chat.db")
	if texts, err := mailsOf(t, dir); err != nil || len(texts) != 3 {
		t.Fatalf("reopened: %d mails, %v", len(texts), err)
	}
	if err := os.Truncate(db, 0); err != nil {
		t.Fatal(err)
	}
	texts, err := mailsOf(t, dir)
	if msg := fmt.Sprint(err); !errors.Is(err, ErrDamaged) || !strings.Contains(msg, db+" is empty") || !strings.Contains(msg, "chat.wal") || !strings.Contains(msg, "move it away") {
		t.Fatalf("chat.db emptied: opened with %d mails (%v); want it refused, naming it, the log and what to do", len(texts), err)
	}
	if err := os.Remove(db); err != nil {
		t.Fatal(err)
	}
	if _, err := mailsOf(t, dir); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), db+" is missing") {
		t.Fatalf("chat.db removed: %v", err)
	}
	// As the error says: the log moved away, a new empty store.
	if err := os.Rename(filepath.Join(dir, "chat.wal"), filepath.Join(dir, "chat.wal.orphan")); err != nil {
		t.Fatal(err)
	}
	if texts, err := mailsOf(t, dir); err != nil || len(texts) != 0 {
		t.Fatalf("the log moved away: %d mails, %v", len(texts), err)
	}
}

// TestDamagedMailRefused: a mail of chat.db that does not decode (one byte
// flipped) refuses the store at open, naming the mailbox, instead of
// refusing that user's every login while sends to them are kept.
func TestDamagedMailRefused(t *testing.T) {
	// 40 mails: more than an inline bucket holds, so the mailbox has pages
	// of its own, mapped from the file (a key that the refusal kept from
	// them once outlived the mapping and crashed its formatting).
	st, dir := filled(t, 40)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "chat.db")
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(`"s":"mail 2"`))
	if i < 0 {
		t.Fatal("mail 2 not found in chat.db")
	}
	b[i] ^= 0x01 // '"' becomes '#': the JSON no longer decodes
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}
	texts, err := mailsOf(t, dir)
	if msg := fmt.Sprint(err); !errors.Is(err, ErrDamaged) || !strings.Contains(msg, `mailbox of "bob"`) || !strings.Contains(msg, "(key 00000000000000") || !strings.Contains(msg, db) || !strings.Contains(msg, "move it away") {
		t.Fatalf("a damaged mail: opened with %d mails (%v); want the store refused, naming bob's mailbox", len(texts), err)
	}
	t.Log(err)
}

// TestClaimsKept: a claim put is read back at open, from the log (a
// crash before any checkpoint) and from chat.db (after one); a claim
// deleted is gone; a claim altered on disk refuses the store, naming it.
func TestClaimsKept(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "chat.db")
	st, _, err := Open(path, true, quiet)
	if err != nil {
		t.Fatal(err)
	}
	hash := bytes.Repeat([]byte{7}, 32)
	for _, nick := range []string{"bob", "ann"} {
		if _, err := st.Write(func(tx *Tx) error { return PutClaim(tx, nick, &Claim{Hash: hash, Until: 42, Open: nick == "ann"}) }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Write(func(tx *Tx) error { return DeleteClaim(tx, "ann") }); err != nil {
		t.Fatal(err)
	}
	want := map[string]Claim{"bob": {Hash: hash, Until: 42}}
	// A crash: the claims are in the log alone.
	crashed := copyWith(t, dir, readAll(t, filepath.Join(dir, "chat.wal")))
	for name, d := range map[string]string{"the log": crashed, "chat.db": dir} {
		if name == "chat.db" {
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
		}
		st2, state, err := Open(filepath.Join(d, "chat.db"), true, quiet)
		if err != nil {
			t.Fatalf("claims in %s: %v", name, err)
		}
		if fmt.Sprint(state.Claims) != fmt.Sprint(want) {
			t.Errorf("claims read back from %s: %v, want %v", name, state.Claims, want)
		}
		if err := st2.Close(); err != nil {
			t.Fatal(err)
		}
	}

	b := readAll(t, path)
	if !bytes.Contains(b, []byte(`"u":42`)) {
		t.Fatal("bob's claim not found in chat.db")
	}
	b = bytes.ReplaceAll(b, []byte(`"u":42`), []byte(`"u":43`)) // still JSON, another time (in free pages too)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = Open(path, true, quiet)
	if msg := fmt.Sprint(err); !errors.Is(err, ErrDamaged) || !strings.Contains(msg, `claim of the nickname "bob"`) || !strings.Contains(msg, path) {
		t.Fatalf("a claim altered on disk: %v; want the store refused, naming the claim", err)
	}
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReserveIDs: ids are reserved a block at a time, so a batch whose ids
// are reserved writes nothing and waits only for the record that reserved
// them (none once they are in chat.db); a failed batch gives back what it
// reserved; and a store reopened after a crash (its files as they are,
// never closed) goes on after every id reserved, whatever was handed out.
func TestReserveIDs(t *testing.T) {
	dir := t.TempDir()
	st, state, err := Open(filepath.Join(dir, "chat.db"), false, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if state.Seq != 0 {
		t.Fatalf("a new store's last id: %d", state.Seq)
	}
	reserve := func(last uint64, fail error) (int64, error) {
		return st.Write(func(tx *Tx) error {
			if err := ReserveIDs(tx, last); err != nil {
				return err
			}
			return fail
		})
	}
	first, err := reserve(2, nil)
	if err != nil || first != st.wal.size.Load() || first <= walFileHeader {
		t.Fatalf("the first ids: end %d (log %d bytes), %v; want the record written", first, st.wal.size.Load(), err)
	}
	for _, last := range []uint64{2, 4, 2 + IDBlock} {
		if end, err := reserve(last, nil); err != nil || end != first {
			t.Fatalf("ids up to %d, within the block: end %d, %v; want %d, the end of the record that reserved them", last, end, err, first)
		}
	}
	if st.wal.size.Load() != first {
		t.Fatalf("ids within the block wrote %d bytes", st.wal.size.Load()-first)
	}
	y := NewSyncer(st)
	defer y.Close()
	y.After(first, func(error) {})
	y.Drain()
	ranAtOnce := false
	y.After(first, func(err error) { ranAtOnce = err == nil })
	if !ranAtOnce {
		t.Fatal("a batch whose ids were reserved by a synced record did not run at once")
	}

	boom := errors.New("the batch fails")
	if _, err := reserve(3+IDBlock, boom); !errors.Is(err, boom) {
		t.Fatalf("failed batch: %v", err)
	}
	if end, err := reserve(2+IDBlock, nil); err != nil || end != first {
		t.Fatalf("after a failed batch past the block: end %d, %v; want %d (its reservation given back)", end, err, first)
	}
	second, err := reserve(3+IDBlock, nil)
	if err != nil || second <= first {
		t.Fatalf("ids past the block: end %d, %v; want a record after %d", second, err, first)
	}
	handed := uint64(5 + IDBlock) // within the second block: written nowhere
	if end, err := reserve(handed, nil); err != nil || end != second {
		t.Fatalf("ids within the second block: end %d, %v; want %d", end, err, second)
	}
	if err := st.SyncTo(second); err != nil {
		t.Fatal(err)
	}

	log, err := os.ReadFile(filepath.Join(dir, "chat.wal"))
	if err != nil {
		t.Fatal(err)
	}
	crashed, state, err := Open(filepath.Join(copyWith(t, dir, log), "chat.db"), true, quiet)
	if err != nil {
		t.Fatal(err)
	}
	crashed.Close()
	if state.Seq < handed || state.Seq != 3+2*IDBlock {
		t.Fatalf("reopened after a crash: last id %d; want %d (every id reserved, and %d was handed out)", state.Seq, 3+2*IDBlock, handed)
	}

	if err := st.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if end, err := reserve(handed, nil); err != nil || end != 0 {
		t.Fatalf("ids reserved in chat.db: end %d, %v; want 0 (nothing to wait for)", end, err)
	}
}

// TestLogFilledAhead: a synced log is filled with zeros a step ahead of
// its records, so its size changes once a step, not once a batch; at open
// the zeros after its last record are its end (no warning, nothing
// dropped), a record cut short before them is dropped with a warning, and
// a damaged record with whole ones after it is refused, zeros or not.
func TestLogFilledAhead(t *testing.T) {
	dir := t.TempDir()
	st, _, err := Open(filepath.Join(dir, "chat.db"), false, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	walPath := filepath.Join(dir, "chat.wal")
	sizes := map[int64]bool{}
	for i := 1; i <= 6; i++ {
		if err := sendMail(st, uint64(i), fmt.Sprint("mail ", i)); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(walPath)
		if err != nil {
			t.Fatal(err)
		}
		sizes[fi.Size()] = true
	}
	if len(sizes) != 1 || !sizes[fillStep] {
		t.Fatalf("the log's file took the sizes %v over 6 batches; want %d alone", sizes, fillStep)
	}
	log, err := os.ReadFile(walPath)
	if err != nil {
		t.Fatal(err)
	}
	end := int(st.wal.size.Load())
	if !allZero(log[end:]) {
		t.Fatal("the log's file past its records is not zeros")
	}
	starts := recordStarts(t, log[:end])
	last := starts[len(starts)-1]

	open := func(log []byte) ([]string, string, error) {
		var warned bytes.Buffer
		to := copyWith(t, dir, log)
		st, _, err := Open(filepath.Join(to, "chat.db"), true, slog.New(slog.NewTextHandler(&warned, nil)))
		if err != nil {
			return nil, warned.String(), err
		}
		st.Close()
		texts, err := mailsOf(t, to)
		return texts, warned.String(), err
	}
	texts, warned, err := open(log)
	if err != nil || len(texts) != 6 || warned != "" {
		t.Fatalf("the log filled ahead: %d mails, %v, logged %q; want all 6 and nothing said", len(texts), err, warned)
	}
	for _, cut := range []int{last + 3, last + walHeader - 2, last + walHeader + 5, end - 1} {
		torn := bytes.Clone(log)
		clear(torn[cut:end]) // the write cut short: zeros where the rest of it was to go
		texts, warned, err := open(torn)
		if err != nil || len(texts) != 5 || !strings.Contains(warned, "cut short") {
			t.Fatalf("the last record cut at %d (of %d to %d), zeros after it: %d mails, %v, logged %q; want the 5 before it and a warning", cut, last, end, len(texts), err, warned)
		}
	}
	bad := bytes.Clone(log)
	bad[starts[1]+walHeader+2] ^= 0xff
	if _, _, err := open(bad); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), fmt.Sprintf("at byte %d ", starts[1])) {
		t.Fatalf("record 2 of 6 damaged, zeros after the last: %v; want the log refused at byte %d", err, starts[1])
	}
}
