package chatserver

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The store is one bbolt file. Its buckets:
//
//	meta     "seq" → the last event id handed out (8 bytes, big endian)
//	         "pruned" → the last event id pruned
//	log      event id → record: every stored event, pruned after the retention window
//	mailbox  nick → bucket of sequence → mail: private messages waiting for a login
//
// Only the hub goroutine writes; replays read concurrently (bbolt readers
// never block the writer).
var (
	bucketMeta    = []byte("meta")
	bucketLog     = []byte("log")
	bucketMailbox = []byte("mailbox")
	keySeq        = []byte("seq")
	keyPruned     = []byte("pruned")
)

// record is one stored event: the text one user (To) or everyone (To == "")
// but Except received, with the id it was sent with.
type record struct {
	ID     uint64 `json:"-"`
	Time   int64  `json:"t"`
	To     string `json:"to,omitempty"`
	Except string `json:"x,omitempty"`
	Text   string `json:"s"`
}

// visibleTo reports whether the record was addressed to nick.
func (r *record) visibleTo(nick string) bool {
	if r.To == "" {
		return r.Except != nick
	}
	return r.To == nick
}

// mail is a private message kept for a user who had no open connection. It
// stays in the mailbox until its delivery is known. Orig is the id of the log
// event the message was also stored under when it was sent (0 when the user
// was offline and nothing was logged for them); ID is the id of the log event
// of its latest offering at a login (0: never offered).
type mail struct {
	Orig uint64 `json:"o,omitempty"`
	ID   uint64 `json:"i,omitempty"`
	From string `json:"f"`
	Text string `json:"s"`
	Time int64  `json:"t"`
}

// eventID is the id of the log event that carries m now (0: none).
func (m *mail) eventID() uint64 {
	if m.ID != 0 {
		return m.ID
	}
	return m.Orig
}

// mailEntry is a mail and its key in its user's mailbox.
type mailEntry struct {
	key []byte
	m   mail
}

type store struct {
	db  *bolt.DB
	wal *wal
}

var pathLog, pathMeta = [][]byte{bucketLog}, [][]byte{bucketMeta}

func mailPath(nick string) [][]byte { return [][]byte{bucketMailbox, []byte(nick)} }

// write runs fn in one bbolt transaction and appends its changes to the
// log, unsynced; it returns the log's size after them (0: nothing written).
// syncTo makes them durable.
func (s *store) write(fn func(tx *wtx) error) (int64, error) {
	var payload []byte
	err := guarded(func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
			w := &wtx{Tx: tx}
			if err := fn(w); err != nil {
				return err
			}
			payload = w.buf
			return nil
		})
	})
	if err != nil || len(payload) == 0 {
		return 0, err
	}
	if err := s.wal.write(payload); err != nil {
		return 0, err
	}
	return s.wal.size.Load(), nil
}

// syncTo syncs the log if its synced part ends before end.
func (s *store) syncTo(end int64) error { return s.wal.syncTo(end) }

// update is write and its sync, for a caller that drained the hub's syncer.
func (s *store) update(fn func(tx *wtx) error) error {
	end, err := s.write(fn)
	if err != nil || end == 0 {
		return err
	}
	if err := s.syncTo(end); err != nil {
		return err
	}
	if s.wal.size.Load() >= walCheckpointBytes {
		return s.checkpoint()
	}
	return nil
}

// checkpoint syncs the bbolt file and empties the log.
func (s *store) checkpoint() error {
	if s.wal.size.Load() == 0 {
		return nil
	}
	if err := s.db.Sync(); err != nil {
		return fmt.Errorf("sync store: %w", err)
	}
	return s.wal.reset()
}

// storeState is what the hub needs from the store at start.
type storeState struct {
	seq       uint64
	pruned    uint64
	mailboxes map[string]int // nick → waiting messages
}

func openStore(path string, noSync bool, log *slog.Logger) (*store, storeState, error) {
	var st storeState
	if err := checkStoreFile(path); err != nil {
		return nil, st, err
	}
	var db *bolt.DB
	err := guarded(func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second, FreelistType: bolt.FreelistMapType, NoSync: true})
		return err
	})
	if err != nil {
		switch {
		case errors.Is(err, bolt.ErrTimeout):
			return nil, st, fmt.Errorf("open store %s: the file is locked by another process (is another chat server running on the same --data?)", path)
		case errors.Is(err, ErrStoreDamaged):
			return nil, st, damaged(path, fmt.Sprintf("cannot be opened (%v)", err))
		case errors.Is(err, bolt.ErrInvalid), errors.Is(err, bolt.ErrChecksum), errors.Is(err, bolt.ErrVersionMismatch):
			return nil, st, damaged(path, fmt.Sprintf("is not a chat store (%v)", err))
		}
		return nil, st, fmt.Errorf("open store %s: %w", path, err)
	}
	walPath := strings.TrimSuffix(path, ".db") + ".wal"
	logData, err := os.ReadFile(walPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		guarded(db.Close)
		return nil, st, fmt.Errorf("open store log %s: %w", walPath, err)
	}
	records, bad := readWAL(logData)
	if bad != nil && !bad.torn {
		guarded(db.Close)
		return nil, st, fmt.Errorf("%w: %s has %s at byte %d, with more after it (%d whole records before it): the changes of the last commits before the server stopped are in it; move it away (mv %s %s.damaged) to start from %s without them, or restore both files from a backup",
			ErrStoreDamaged, walPath, bad.what, bad.offset, len(records), walPath, walPath, path)
	}
	if bad != nil {
		log.Warn("chat store log ends in a record cut short (a write that was never acknowledged): dropped", "file", walPath, "offset", bad.offset, "found", bad.what, "records", len(records))
	}
	st.mailboxes = map[string]int{}
	err = guarded(func() error {
		return db.Update(func(tx *bolt.Tx) error {
			if err := verifyStore(tx); err != nil {
				return fmt.Errorf("%w: %v", ErrStoreDamaged, err)
			}
			for _, rec := range records {
				if err := decodeChanges(rec, func(c walChange) error { return applyChange(tx, c) }); err != nil {
					return fmt.Errorf("apply the log %s: %w", walPath, err)
				}
			}
			for _, name := range [][]byte{bucketMeta, bucketLog, bucketMailbox} {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			if v := tx.Bucket(bucketMeta).Get(keySeq); len(v) == 8 {
				st.seq = binary.BigEndian.Uint64(v)
			}
			if v := tx.Bucket(bucketMeta).Get(keyPruned); len(v) == 8 {
				st.pruned = binary.BigEndian.Uint64(v)
			}
			return tx.Bucket(bucketMailbox).ForEachBucket(func(k []byte) error {
				st.mailboxes[string(k)] = tx.Bucket(bucketMailbox).Bucket(k).Stats().KeyN
				return nil
			})
		})
	})
	if err != nil {
		guarded(db.Close)
		if errors.Is(err, ErrStoreDamaged) {
			return nil, st, damaged(path, fmt.Sprintf("has damaged pages (%v)", err))
		}
		return nil, st, fmt.Errorf("open store %s: %w", path, err)
	}
	// The log's changes are in the bbolt file: sync it, then empty the log.
	if err := db.Sync(); err != nil {
		guarded(db.Close)
		return nil, st, fmt.Errorf("sync store %s: %w", path, err)
	}
	f, err := os.OpenFile(walPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		guarded(db.Close)
		return nil, st, fmt.Errorf("open store log %s: %w", walPath, err)
	}
	w := &wal{f: f, noSync: noSync}
	w.size.Store(int64(len(logData)))
	if err := w.reset(); err != nil {
		f.Close()
		guarded(db.Close)
		return nil, st, fmt.Errorf("store log %s: %w", walPath, err)
	}
	return &store{db: db, wal: w}, st, nil
}

func (s *store) close() error {
	err := s.checkpoint()
	if err == nil && s.wal.noSync {
		err = s.db.Sync()
	}
	return errors.Join(err, s.wal.f.Close(), s.db.Close())
}

func idKey(id uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], id)
	return k[:]
}

func putSeq(tx *wtx, seq uint64) error {
	return tx.put(pathMeta, keySeq, idKey(seq))
}

func putRecord(tx *wtx, r *record) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return tx.put(pathLog, idKey(r.ID), v)
}

func deleteRecord(tx *wtx, id uint64) error {
	return tx.del(pathLog, idKey(id))
}

func addMail(tx *wtx, nick string, m *mail) error {
	b, err := tx.Bucket(bucketMailbox).CreateBucketIfNotExists([]byte(nick))
	if err != nil {
		return err
	}
	n, err := b.NextSequence()
	if err != nil {
		return err
	}
	v, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return tx.put(mailPath(nick), idKey(n), v)
}

// readMail returns nick's waiting messages, oldest first.
func readMail(tx *bolt.Tx, nick string) ([]mailEntry, error) {
	b := tx.Bucket(bucketMailbox).Bucket([]byte(nick))
	if b == nil {
		return nil, nil
	}
	var out []mailEntry
	err := b.ForEach(func(k, v []byte) error {
		e := mailEntry{key: append([]byte(nil), k...)}
		if err := json.Unmarshal(v, &e.m); err != nil {
			return fmt.Errorf("decode mailbox of %s: %w", nick, err)
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

// putMail stores e back into nick's mailbox.
func putMail(tx *wtx, nick string, e *mailEntry) error {
	b := tx.Bucket(bucketMailbox).Bucket([]byte(nick))
	if b == nil {
		return fmt.Errorf("mailbox of %s is gone", nick)
	}
	v, err := json.Marshal(&e.m)
	if err != nil {
		return err
	}
	return tx.put(mailPath(nick), e.key, v)
}

// deleteMail removes the entries with keys from nick's mailbox, and the
// mailbox itself when empty says the caller counted none left.
func deleteMail(tx *wtx, nick string, keys [][]byte, empty bool) error {
	if empty {
		return tx.delBucket(bucketMailbox, []byte(nick))
	}
	for _, k := range keys {
		if err := tx.del(mailPath(nick), k); err != nil {
			return err
		}
	}
	return nil
}

// readLog returns up to limit records with after < id <= upTo that nick can
// see, and the id to continue after (upTo when the range is exhausted).
func (s *store) readLog(nick string, after, upTo uint64, limit int) ([]*record, uint64, error) {
	var out []*record
	next := upTo
	err := guarded(func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketLog).Cursor()
			for k, v := c.Seek(idKey(after + 1)); k != nil; k, v = c.Next() {
				id := binary.BigEndian.Uint64(k)
				if id > upTo {
					break
				}
				r := &record{ID: id}
				if err := json.Unmarshal(v, r); err != nil {
					return fmt.Errorf("decode event %d: %w", id, err)
				}
				if r.visibleTo(nick) {
					out = append(out, r)
					if len(out) == limit {
						next = id
						return nil
					}
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, after, fmt.Errorf("read history: %w", err)
	}
	return out, next, nil
}

// prune deletes up to max log records older than cutoff and reports how many
// it deleted and the last id deleted (0: none), which it also stores. Ids
// grow with time, so it stops at the first younger record.
func prune(tx *wtx, cutoff time.Time, max int) (int, uint64, error) {
	var old [][]byte
	c := tx.Bucket(bucketLog).Cursor()
	for k, v := c.First(); k != nil && len(old) < max; k, v = c.Next() {
		var r record
		if err := json.Unmarshal(v, &r); err != nil {
			return 0, 0, fmt.Errorf("decode event %d: %w", binary.BigEndian.Uint64(k), err)
		}
		if r.Time >= cutoff.UnixNano() {
			break
		}
		old = append(old, append([]byte(nil), k...))
	}
	// Deleting behind a cursor skips keys in bbolt, so delete afterwards.
	for _, k := range old {
		if err := tx.del(pathLog, k); err != nil {
			return 0, 0, err
		}
	}
	if len(old) == 0 {
		return 0, 0, nil
	}
	last := old[len(old)-1]
	return len(old), binary.BigEndian.Uint64(last), tx.put(pathMeta, keyPruned, last)
}

// used is the number of bytes of data in the store: its pages less the free ones.
func (s *store) used(tx *bolt.Tx) int64 {
	st := s.db.Stats()
	return tx.Size() - int64(st.FreePageN+st.PendingPageN)*int64(tx.DB().Info().PageSize)
}

// pruneMail deletes the mails sent before cutoff and returns, for every
// mailbox it changed, how many are left.
func pruneMail(tx *wtx, cutoff time.Time) (map[string]int, error) {
	mb := tx.Bucket(bucketMailbox)
	var nicks [][]byte
	if err := mb.ForEachBucket(func(k []byte) error {
		nicks = append(nicks, append([]byte(nil), k...))
		return nil
	}); err != nil {
		return nil, err
	}
	left := map[string]int{}
	for _, nick := range nicks {
		b := mb.Bucket(nick)
		var old [][]byte
		n := 0
		err := b.ForEach(func(k, v []byte) error {
			n++
			var m mail
			if err := json.Unmarshal(v, &m); err != nil {
				return fmt.Errorf("decode mailbox of %s: %w", nick, err)
			}
			if m.Time < cutoff.UnixNano() {
				old = append(old, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(old) == 0 {
			continue
		}
		if err := deleteMail(tx, string(nick), old, len(old) == n); err != nil {
			return nil, err
		}
		left[string(nick)] = n - len(old)
	}
	return left, nil
}
