package store

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCheckpointRoomBound checks that the room held for a checkpoint
// (roomNeed.size) is at least what bbolt allocates for it, page by page,
// whatever the checkpoint writes: small and large values, values of about
// half a page (two to a node), many mailboxes, scattered deletes, mail
// written again, mailboxes dropped; on an empty store and on one whose
// leaves the checkpoint rewrites.
func TestCheckpointRoomBound(t *testing.T) {
	text := func(n int) string { return strings.Repeat("\x01é\"", n/8) } // escaped in JSON: larger stored
	mails := func(nicks, each, size int) func(tx *Tx, i int) error {
		return func(tx *Tx, i int) error {
			if i >= each {
				return nil
			}
			for n := range nicks {
				if err := AddMail(tx, fmt.Sprint("u", n), &Mail{From: "mary", Text: text(size), Time: 1}); err != nil {
					return err
				}
			}
			return nil
		}
	}
	events := func(size int) func(tx *Tx, i int) error {
		return func(tx *Tx, i int) error {
			return PutRecord(tx, &Record{ID: uint64(i + 1), Time: 1, Text: text(size)})
		}
	}
	var offered [2][]MailEntry // the mails "mail written again" writes again
	for _, c := range []struct {
		name    string
		prefill func(tx *Tx, i int) error // before a checkpoint, i < 400
		batch   func(st *Store, tx *Tx, i int) error
	}{
		{name: "small events and mail", batch: func(_ *Store, tx *Tx, i int) error {
			if err := events(80)(tx, i); err != nil {
				return err
			}
			return mails(1, 1<<30, 80)(tx, i)
		}},
		{name: "large values", batch: func(_ *Store, tx *Tx, i int) error {
			if err := events(4096)(tx, i); err != nil {
				return err
			}
			return mails(1, 1<<30, 4096)(tx, i)
		}},
		{name: "half-page values", batch: func(_ *Store, tx *Tx, i int) error { return mails(1, 1<<30, 1000)(tx, i) }},
		{name: "many mailboxes", batch: func(_ *Store, tx *Tx, i int) error { return mails(50, 10, 200)(tx, i) }},
		{name: "scattered mail deletes", prefill: mails(4, 400, 600), batch: func(st *Store, tx *Tx, i int) error {
			if i >= 200 {
				return nil
			}
			return DeleteMail(tx, fmt.Sprint("u", i%4), [][]byte{IDKey(uint64(2*i + 1))}, false)
		}},
		{name: "mail written again", prefill: mails(2, 400, 3000), batch: func(st *Store, tx *Tx, i int) error {
			if i >= 400 {
				return nil
			}
			if i < 2 {
				var err error
				if offered[i], err = ReadMail(tx, fmt.Sprint("u", i)); err != nil {
					return err
				}
			}
			e := offered[i%2][i/2]
			e.Mail.ID = uint64(1000 + i)
			return PutMail(tx, fmt.Sprint("u", i%2), &e)
		}},
		{name: "mailboxes dropped", prefill: mails(40, 20, 500), batch: func(st *Store, tx *Tx, i int) error {
			if i >= 40 {
				return nil
			}
			return DeleteMail(tx, fmt.Sprint("u", i), nil, true)
		}},
		{name: "new mailboxes past inline", batch: func(_ *Store, tx *Tx, i int) error {
			return AddMail(tx, fmt.Sprint("n", i), &Mail{From: "mary", Text: text(1200), Time: 1})
		}},
		{name: "mail delivered one by one", prefill: mails(1, 400, 300), batch: func(st *Store, tx *Tx, i int) error {
			if i >= 400 {
				return nil
			}
			return DeleteMail(tx, "u0", [][]byte{IDKey(uint64(i + 1))}, i == 399)
		}},
		{name: "appended to a full store", prefill: events(1500), batch: func(_ *Store, tx *Tx, i int) error {
			return PutRecord(tx, &Record{ID: uint64(10000 + i), Time: 1, Text: text(1500)})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, _, err := Open(filepath.Join(t.TempDir(), "chat.db"), true, quiet)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if c.prefill != nil {
				for i := range 400 {
					if _, err := st.Write(func(tx *Tx) error { return c.prefill(tx, i) }); err != nil {
						t.Fatal(err)
					}
				}
				if err := st.Checkpoint(); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 600 {
				if _, err := st.Write(func(tx *Tx) error { return c.batch(st, tx, i) }); err != nil {
					t.Fatal(err)
				}
			}
			need := st.room.need(st.mem.need())
			before := pagesAllocated(st)
			if err := st.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			took := pagesAllocated(st) - before
			if took == 0 || took > need {
				t.Fatalf("the checkpoint allocated %d bytes of pages, the room held for it is %d", took, need)
			}
			t.Logf("held %d bytes, the checkpoint took %d (%.0f%%)", need, took, 100*float64(took)/float64(need))
		})
	}
}

// pagesAllocated is the bytes of pages st's chat.db allocated so far.
func pagesAllocated(st *Store) int64 {
	s := st.db.Stats()
	return s.TxStats.GetPageAlloc()
}

// TestCheckpointWithoutNextLog checks a checkpoint that wrote chat.db but
// could not start the next log (here a folder stands where it is written;
// on a full disk, no room for it): no batch goes to the old log, which
// chat.db no longer expects and a start replaces, and once the next log
// can be made every acknowledged batch is kept.
func TestCheckpointWithoutNextLog(t *testing.T) {
	st, dir := filled(t, 3)
	blocker := filepath.Join(dir, "chat.wal.new")
	if err := os.Mkdir(blocker, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := st.Checkpoint(); err == nil {
		t.Fatal("a checkpoint that cannot make its next log succeeded")
	}
	add := func(text string) error {
		_, err := st.Write(func(tx *Tx) error {
			return AddMail(tx, "bob", &Mail{From: "mary", Text: text, Time: 1})
		})
		return err
	}
	if err := add("lost?"); err == nil {
		t.Fatal("a batch was written to the log of a store that no longer expects it")
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if err := add("kept"); err != nil {
		t.Fatal(err)
	}
	if err := st.SyncTo(st.wal.size.Load()); err != nil {
		t.Fatal(err)
	}
	// A kill -9 now: the store is opened from the files as they are.
	texts, err := mailsOf(t, copyWith(t, dir, mustRead(t, filepath.Join(dir, "chat.wal"))))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"mail 1", "mail 2", "mail 3", "kept"}; !slices.Equal(texts, want) {
		t.Fatalf("bob's mailbox after a restart: %q, want %q", texts, want)
	}
	st.Close()
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
