package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// crashed writes n batches (an event and a mail for bob each) into a new
// store, never checkpointed, and returns a copy of its files as a kill -9
// would leave them: chat.db as created, every commit in chat.wal.
func crashed(t *testing.T, n int) (dir string, log []byte) {
	t.Helper()
	st, from := filled(t, n)
	defer st.Close()
	log, err := os.ReadFile(filepath.Join(from, "chat.wal"))
	if err != nil {
		t.Fatal(err)
	}
	return copyWith(t, from, log), log
}

// wantRefused fails unless err refuses the store as damaged and names each
// of words.
func wantRefused(t *testing.T, what string, texts []string, err error, words ...string) {
	t.Helper()
	msg := fmt.Sprint(err)
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("%s: opened with %d of the mails (%v); want it refused", what, len(texts), err)
	}
	for _, w := range words {
		if !strings.Contains(msg, w) {
			t.Fatalf("%s: refused without naming %q: %v", what, w, err)
		}
	}
}

// TestLogDamageFollowedByRecords: a record overwritten (its header, or a
// bit of its length and one of its checksum) with whole records after it
// refuses the store, naming the log and the offset, where it was once
// taken for a torn end and every acknowledged record after it dropped.
func TestLogDamageFollowedByRecords(t *testing.T) {
	dir, log := crashed(t, 20)
	if texts, err := mailsOf(t, copyWith(t, dir, log)); err != nil || len(texts) != 20 {
		t.Fatalf("the crashed store: %d mails, %v", len(texts), err)
	}
	starts := recordStarts(t, log)
	at := starts[10]
	for name, damage := range map[string]func([]byte){
		"8 bytes over its header": func(b []byte) { copy(b[at:], "\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8") },
		"a bit of its length and one of its checksum": func(b []byte) {
			b[at+lengthAt+2] ^= 0x10
			b[at+sumAt] ^= 0x01
		},
	} {
		b := bytes.Clone(log)
		damage(b)
		texts, err := mailsOf(t, copyWith(t, dir, b))
		wantRefused(t, name, texts, err, "chat.wal", fmt.Sprintf("at byte %d ", at), "mv ")
	}
}

// TestLogOfNoise: a log replaced by random bytes is refused, not read as a
// torn end with nothing before it.
func TestLogOfNoise(t *testing.T) {
	dir, _ := crashed(t, 5)
	noise := make([]byte, 100<<10)
	rng := rand.NewChaCha8([32]byte{7})
	rng.Read(noise)
	texts, err := mailsOf(t, copyWith(t, dir, noise))
	wantRefused(t, "chat.wal of noise", texts, err, "chat.wal")
}

// TestLogMissingBesideItsStore: the log of a store that was never
// checkpointed holds every commit; emptied or removed, the store is
// refused instead of opening empty.
func TestLogMissingBesideItsStore(t *testing.T) {
	dir, _ := crashed(t, 5)
	empty := copyWith(t, dir, nil)
	texts, err := mailsOf(t, empty)
	wantRefused(t, "chat.wal emptied", texts, err, "chat.wal", "empty")

	gone := copyWith(t, dir, nil)
	if err := os.Remove(filepath.Join(gone, "chat.wal")); err != nil {
		t.Fatal(err)
	}
	texts, err = mailsOf(t, gone)
	wantRefused(t, "chat.wal removed", texts, err, "chat.wal", "missing")
}

// TestStoredMailChecksum: a mail altered on disk in a way that still
// decodes (one byte of its text) is refused, naming its user, never
// delivered altered.
func TestStoredMailChecksum(t *testing.T) {
	st, dir := filled(t, 40)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "chat.db")
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(`"s":"mail 25"`))
	if i < 0 {
		t.Fatal("mail 25 not found in chat.db")
	}
	b[i+len(`"s":"mail 2`)] = 'u' // "mail 25" becomes "mail 2u": still JSON
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}
	texts, err := mailsOf(t, dir)
	wantRefused(t, "a mail altered", texts, err, `mailbox of "bob"`, "checksum")
}

// TestLegacyStoreMigrates: a store written before logs had a header and
// values a checksum (no "walepoch" in chat.db, a log of the first format,
// values of bare JSON) opens with everything in it, and goes on with a log
// of epoch 1.
func TestLegacyStoreMigrates(t *testing.T) {
	st, dir := filled(t, 3)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "chat.db")
	// As the first format left it: no epoch, a mail of bare JSON.
	bdb, err := bolt.Open(db, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Delete(keyWALEpoch); err != nil {
			return err
		}
		return tx.Bucket(bucketMailbox).Bucket([]byte("bob")).Put(IDKey(100), []byte(`{"f":"mary","s":"bare mail","t":1}`))
	}); err != nil {
		t.Fatal(err)
	}
	bdb.Close()
	// A log of the first format: one record putting a mail.
	var tx Tx
	tx.buf = make([]byte, 8)
	tx.path(walPut, mailPath("bob"), IDKey(101))
	v := []byte(`{"f":"mary","s":"logged mail","t":2}`)
	tx.buf = binary.AppendUvarint(tx.buf, uint64(len(v)))
	tx.buf = append(tx.buf, v...)
	binary.LittleEndian.PutUint32(tx.buf, uint32(len(tx.buf)-8))
	binary.LittleEndian.PutUint32(tx.buf[4:], crc32.Checksum(tx.buf[8:], castagnoli))
	if err := os.WriteFile(filepath.Join(dir, "chat.wal"), tx.buf, 0o600); err != nil {
		t.Fatal(err)
	}

	texts, err := mailsOf(t, dir)
	want := []string{"mail 1", "mail 2", "mail 3", "bare mail", "logged mail"}
	if err != nil || !slices.Equal(texts, want) {
		t.Fatalf("the legacy store: %q, %v; want %q", texts, err, want)
	}
	log, err := os.ReadFile(filepath.Join(dir, "chat.wal"))
	if err != nil {
		t.Fatal(err)
	}
	if ep, err := logEpoch(log); err != nil || ep < 1 {
		t.Fatalf("the log after the migration: epoch %d, %v", ep, err)
	}
	// And again, as a store of the present format.
	if texts, err := mailsOf(t, dir); err != nil || !slices.Equal(texts, want) {
		t.Fatalf("reopened: %q, %v", texts, err)
	}
}
