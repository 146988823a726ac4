package store

import (
	"bytes"
	"encoding/binary"
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
//	meta     "seq" → the last event id reserved (ReserveIDs; 8 bytes, big endian)
//	         "pruned" → the last event id pruned
//	         "walepoch" → the epoch of the log that follows the last checkpoint
//	log      event id → record: every stored event, pruned after the retention window
//	mailbox  nick → bucket of sequence → mail: private messages waiting for a login
//	claims   nick → claim: the nicknames claimed by their first login (Claim)
//
// One writer at a time (the hub's lock); replays read concurrently (bbolt readers
// never block the writer).
var (
	bucketMeta    = []byte("meta")
	bucketLog     = []byte("log")
	bucketMailbox = []byte("mailbox")
	bucketClaims  = []byte("claims")
	keySeq        = []byte("seq")
	keyPruned     = []byte("pruned")
	keyWALEpoch   = []byte("walepoch")
)

// Record is one stored event: the text one user (To) or everyone (To == "")
// but Except received, with the id it was sent with.
type Record struct {
	ID     uint64 `json:"-"`
	Time   int64  `json:"t"`
	To     string `json:"to,omitempty"`
	Except string `json:"x,omitempty"`
	Text   string `json:"s"`
}

// visibleTo reports whether the record was addressed to nick.
func (r *Record) visibleTo(nick string) bool {
	if r.To == "" {
		return r.Except != nick
	}
	return r.To == nick
}

// Mail is a private message kept for a user who had no open connection. It
// stays in the mailbox until its delivery is known. Orig is the id of the log
// event the message was also stored under when it was sent (0 when the user
// was offline and nothing was logged for them); ID is the id of the log event
// of its latest offering at a login (0: never offered).
type Mail struct {
	Orig uint64 `json:"o,omitempty"`
	ID   uint64 `json:"i,omitempty"`
	From string `json:"f"`
	Addr string `json:"a,omitempty"` // the sender's address (the per-address limits)
	Text string `json:"s"`
	Time int64  `json:"t"`
}

// EventID is the id of the log event that carries m now (0: none).
func (m *Mail) EventID() uint64 {
	if m.ID != 0 {
		return m.ID
	}
	return m.Orig
}

// Claim is a nickname's claim (the chat's --claim-nicks): the SHA-256 of
// its secret and until when it holds the nickname with no stream open
// (Until, Unix nanoseconds); Open says a stream of it was open when it was
// stored, so that after a crash it holds the nickname as if that stream
// had just closed.
type Claim struct {
	Hash  []byte `json:"h"`
	Until int64  `json:"u,omitempty"`
	Open  bool   `json:"o,omitempty"`
}

// MailEntry is a mail and its key in its user's mailbox.
type MailEntry struct {
	Key  []byte
	Mail Mail
}

// Store is chat.db and its log, open. One writer at a time (the hub's lock)
// writes and checkpoints; ReadLog may run beside it.
type Store struct {
	db     *bolt.DB
	path   string
	wal    *wal
	mem    *memtable
	dbUsed int64  // bytes of data in chat.db at the last checkpoint (hub goroutine)
	epoch  uint64 // the epoch of the log chat.db expects
	room   room   // the room held for the next checkpoint (room.go)
	tx     Tx     // the batch being written, its buffers kept from one to the next
	ids    uint64 // the last event id reserved: stored as meta "seq" (ReserveIDs)
	idsEnd int64  // where the log's record that reserved ids ends (0: chat.db holds them)
}

var pathLog, pathMeta, pathClaims = [][]byte{bucketLog}, [][]byte{bucketMeta}, [][]byte{bucketClaims}

func mailPath(nick string) [][]byte { return [][]byte{bucketMailbox, []byte(nick)} }

// Write runs fn, whose changes go to the memtable and, as one record, to
// the log, unsynced; it returns the log's size after them, or, when fn
// wrote nothing, where the record that reserved its ids ends (ReserveIDs;
// 0: nothing to wait for). SyncTo makes them durable. When fn or the log's write fails,
// the memtable is as it was before.
func (s *Store) Write(fn func(tx *Tx) error) (int64, error) {
	m := s.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	tx := &s.tx
	tx.begin(s)
	err := guarded(func() error { return fn(tx) })
	if err == nil && tx.changed() {
		err = s.room.reserve(s.room.need(m.need()))
		if err == nil && s.wal.epoch != s.epoch {
			// A checkpoint wrote chat.db but could not start the next
			// log: nothing may go to the old one, which chat.db no
			// longer expects.
			err = s.wal.reset(s.epoch)
		}
		if err == nil {
			err = s.wal.write(tx.buf)
		}
		if err == nil && tx.reserved {
			s.idsEnd = s.wal.size.Load()
		}
	}
	tx.closeView()
	if err != nil {
		tx.rollback()
	}
	changed, waitFor := tx.changed(), tx.waitFor
	tx.end()
	switch {
	case err != nil:
		return 0, err
	case !changed:
		return waitFor, nil
	}
	return s.wal.size.Load(), nil
}

// IDsEnd is where the log's record that reserved the ids handed out ends
// (0: chat.db holds them): once the log is synced up to it, they are safe
// to show (ReserveIDs).
func (s *Store) IDsEnd() int64 { return s.idsEnd }

// SyncTo syncs the log if its synced part ends before end.
func (s *Store) SyncTo(end int64) error { return s.wal.syncTo(end) }

// Used is the number of bytes of data in the store: chat.db's at the last
// checkpoint and what was put since.
func (s *Store) Used() int64 { return s.dbUsed + s.mem.bytes }

// Checkpoint writes the memtable into chat.db in one synced transaction,
// then empties the log and the memtable. The hub's syncer must be drained.
func (s *Store) Checkpoint() error {
	m := s.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.empty() && s.wal.size.Load() == walFileHeader {
		// Nothing since the last checkpoint; the log chat.db expects is
		// still to be made when the checkpoint could not make it.
		return s.wal.reset(s.epoch)
	}
	next := s.epoch + 1
	if err := guarded(func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
			if err := m.flush(tx); err != nil {
				return err
			}
			return tx.Bucket(bucketMeta).Put(keyWALEpoch, IDKey(next))
		})
	}); err != nil {
		return fmt.Errorf("checkpoint: write %s: %w", s.path, err)
	}
	s.epoch, s.idsEnd = next, 0
	m.reset()
	if err := s.wal.reset(next); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return s.Measure()
}

// Measure sets dbUsed from chat.db (its pages less the free ones), and
// where its pages end for the room held past them.
func (s *Store) Measure() error {
	return guarded(func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			free, ps := dbFree(s.db)
			s.dbUsed = tx.Size() - free*ps
			s.room.moved(tx.Size(), free, ps)
			return nil
		})
	})
}

// dbFree is the number of db's free pages and its page size.
func dbFree(db *bolt.DB) (free, pageSize int64) {
	st := db.Stats()
	return int64(st.FreePageN + st.PendingPageN), int64(db.Info().PageSize)
}

// State is what the hub needs from the store at start.
type State struct {
	Seq       uint64           // the last event id reserved: every id handed out is at most it
	Pruned    uint64           // the last event id pruned
	Mailboxes map[string]int   // nick → waiting messages
	Claims    map[string]Claim // nick → its claim
}

// Open opens chat.db at path and its log beside it. The log's records
// (the batches since the last checkpoint) are applied to chat.db in one
// synced transaction, and the log emptied.
func Open(path string, noSync bool, log *slog.Logger) (*Store, State, error) {
	var st State
	walPath := strings.TrimSuffix(path, ".db") + ".wal"
	if err := checkCheckpointed(path, walPath); err != nil {
		return nil, st, err
	}
	if err := checkStoreFile(path); err != nil {
		return nil, st, err
	}
	var db *bolt.DB
	err := guarded(func() (err error) {
		// chat.db is written only at checkpoints, each one synced (bbolt's
		// own commit: its pages, then its meta page), --no-fsync or not:
		// between two of them the log is the store of record.
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second, FreelistType: bolt.FreelistMapType})
		return err
	})
	if err != nil {
		switch {
		case errors.Is(err, bolt.ErrTimeout):
			return nil, st, fmt.Errorf("open store %s: the file is locked by another process (is another chat server running on the same --data?)", path)
		case errors.Is(err, ErrDamaged):
			return nil, st, damaged(path, fmt.Sprintf("cannot be opened (%v)", err))
		case errors.Is(err, bolt.ErrInvalid), errors.Is(err, bolt.ErrChecksum), errors.Is(err, bolt.ErrVersionMismatch):
			return nil, st, damaged(path, fmt.Sprintf("is not a chat store (%v)", err))
		}
		return nil, st, fmt.Errorf("open store %s: %w", path, err)
	}
	epoch, hasEpoch, err := storedEpoch(db)
	if err != nil {
		guarded(db.Close)
		return nil, st, damaged(path, fmt.Sprintf("has damaged pages (%v)", err))
	}
	records, err := recoverLog(walPath, path, epoch, hasEpoch, log)
	if err != nil {
		guarded(db.Close)
		return nil, st, err
	}
	rm, err := holdRoom(db, path, records)
	if err != nil {
		guarded(db.Close)
		if rm.f != nil {
			rm.f.Close()
		}
		return nil, st, fmt.Errorf("open store %s: cannot take in its log %s: %w", path, walPath, err)
	}
	st.Mailboxes, st.Claims = map[string]int{}, map[string]Claim{}
	err = guarded(func() error {
		return db.Update(func(tx *bolt.Tx) error {
			for _, rec := range records {
				if err := decodeChanges(rec, func(c walChange) error { return applyChange(tx, c) }); err != nil {
					return fmt.Errorf("apply the log %s: %w", walPath, err)
				}
			}
			for _, name := range [][]byte{bucketMeta, bucketLog, bucketMailbox, bucketClaims} {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			// The log's changes are in chat.db with this commit: the next
			// log is of the next epoch.
			if err := tx.Bucket(bucketMeta).Put(keyWALEpoch, IDKey(epoch+1)); err != nil {
				return err
			}
			if v := tx.Bucket(bucketMeta).Get(keySeq); len(v) == 8 {
				st.Seq = binary.BigEndian.Uint64(v)
			}
			if v := tx.Bucket(bucketMeta).Get(keyPruned); len(v) == 8 {
				st.Pruned = binary.BigEndian.Uint64(v)
			}
			// Each claim decoded: one that does not would give its nickname
			// to the next login.
			if err := tx.Bucket(bucketClaims).ForEach(func(k, v []byte) error {
				var c Claim
				if err := decodeValue(v, &c); err != nil || len(c.Hash) != 32 {
					return &claimDamage{nick: string(k), err: err}
				}
				st.Claims[string(k)] = c
				return nil
			}); err != nil {
				return err
			}
			// Counted with a cursor (Stats counts only the pages written),
			// each mail decoded: one that does not decode would refuse every
			// login of its user while sends to them are kept.
			return tx.Bucket(bucketMailbox).ForEachBucket(func(k []byte) error {
				n := 0
				c := tx.Bucket(bucketMailbox).Bucket(k).Cursor()
				for mk, v := c.First(); mk != nil; mk, v = c.Next() {
					var m Mail
					if err := decodeValue(v, &m); err != nil {
						return &mailDamage{nick: string(k), key: bytes.Clone(mk), n: n, err: err} // mk lives in the mapping, which closes before the error is read
					}
					n++
				}
				if n > 0 {
					st.Mailboxes[string(k)] = n
				}
				return nil
			})
		})
	})
	if err != nil {
		guarded(db.Close)
		rm.f.Close()
		if isNoSpace(err) {
			// Not a byte of the log is lost (it is still there), and the
			// pages this attempt wrote go back to the disk.
			return nil, st, errors.Join(fmt.Errorf("open store %s: %w: taking in its log %s ran out of room (%v, %s); chat.db is as it was and the log is kept: free space on that disk and start again",
				path, ErrNoRoom, walPath, err, freeSpace(path)), giveBack(path, rm.end+rm.held))
		}
		if md, ok := errors.AsType[*mailDamage](err); ok {
			return nil, st, damaged(path, md.Error())
		}
		if cd, ok := errors.AsType[*claimDamage](err); ok {
			return nil, st, damaged(path, cd.Error())
		}
		if errors.Is(err, ErrDamaged) {
			return nil, st, damaged(path, fmt.Sprintf("has damaged pages (%v)", err))
		}
		return nil, st, fmt.Errorf("open store %s: %w", path, err)
	}
	// The log's changes are in chat.db, synced by that commit: a new,
	// empty log of the next epoch.
	if hasEpoch {
		// Its records are in chat.db: their room goes to the new log first
		// (as at a checkpoint, see wal.reset).
		os.Truncate(walPath, walFileHeader)
	}
	w := &wal{path: walPath, noSync: noSync}
	s := &Store{db: db, path: path, wal: w, mem: newMemtable(), epoch: epoch + 1, room: rm, ids: st.Seq}
	if err = w.reset(epoch + 1); err == nil {
		err = s.Measure()
	}
	if err != nil {
		if w.f != nil {
			w.f.Close()
		}
		guarded(db.Close)
		rm.f.Close()
		return nil, st, fmt.Errorf("store log %s: %w", walPath, err)
	}
	return s, st, nil
}

// storedEpoch reads every page of chat.db that holds data (verifyStore)
// and returns the epoch of the log it expects (has: it names one; a new
// store, or one written before logs had epochs, does not).
func storedEpoch(db *bolt.DB) (epoch uint64, has bool, err error) {
	err = guarded(func() error {
		return db.View(func(tx *bolt.Tx) error {
			if err := verifyStore(tx); err != nil {
				return err
			}
			if b := tx.Bucket(bucketMeta); b != nil {
				if v := b.Get(keyWALEpoch); len(v) == 8 {
					epoch, has = binary.BigEndian.Uint64(v), true
				}
			}
			return nil
		})
	})
	return epoch, has, err
}

// recoverLog reads the log at walPath beside the store at path, which
// expects the log of epoch (has), and returns the payloads of its records
// to apply again, or refuses the pair when they disagree (wal.go).
func recoverLog(walPath, path string, epoch uint64, has bool, log *slog.Logger) ([][]byte, error) {
	data, err := os.ReadFile(walPath)
	missing := errors.Is(err, os.ErrNotExist)
	if err != nil && !missing {
		return nil, fmt.Errorf("open store log %s: %w", walPath, err)
	}
	refuse := func(what string) error {
		return fmt.Errorf("%w: %s %s, while %s expects its log of epoch %d (the commits since its last checkpoint are in it): restore both files from a backup or, to start from %s without those commits, move the log away (mv %s %s.damaged)",
			ErrDamaged, walPath, what, path, epoch, path, walPath, walPath)
	}
	if !has {
		// A new store, or one written before logs had a header: its log,
		// if any, is of the first format.
		if len(data) >= len(walMagic) && bytes.Equal(data[:len(walMagic)], walMagic) {
			return nil, fmt.Errorf("%w: %s is a log of a store with checkpoints, while %s has none: they are not one store; restore both files from a backup",
				ErrDamaged, walPath, path)
		}
		records, bad := readWALv1(data)
		return records, walDamageError(walPath, path, 0, len(records), bad, log)
	}
	if missing {
		return nil, refuse("is missing")
	}
	logEp, err := logEpoch(data)
	if err != nil {
		return nil, refuse(err.Error())
	}
	switch logEp {
	case epoch:
	case epoch - 1:
		// The checkpoint into chat.db committed, the new log was not yet
		// in place: this log's changes are all in chat.db.
		log.Info("chat store log already checkpointed: replaced", "file", walPath, "epoch", logEp)
		return nil, nil
	default:
		return nil, refuse(fmt.Sprintf("is the log of epoch %d: another store's, or an older copy", logEp))
	}
	records, bad := readWAL(data[walFileHeader:], epoch)
	return records, walDamageError(walPath, path, walFileHeader, len(records), bad, log)
}

// walDamageError is the refusal for bad, found base bytes into the log
// after n whole records, or nil with a warning when bad is only a torn end.
func walDamageError(walPath, path string, base int64, n int, bad *walDamage, log *slog.Logger) error {
	if bad == nil {
		return nil
	}
	if bad.torn {
		log.Warn("chat store log ends in a record cut short (a write that was never acknowledged): dropped", "file", walPath, "offset", base+bad.offset, "found", bad.what, "records", n)
		return nil
	}
	return fmt.Errorf("%w: %s at byte %d has %s (%d whole records before it): the changes of the last commits before the server stopped are in it; move it away (mv %s %s.damaged) to start from %s without them, or restore both files from a backup",
		ErrDamaged, walPath, base+bad.offset, bad.what, n, walPath, walPath, path)
}

// mailDamage is a mail of chat.db that does not decode.
type mailDamage struct {
	nick string
	key  []byte
	n    int // the mails before it in the mailbox
	err  error
}

func (e *mailDamage) Error() string {
	return fmt.Sprintf("has a damaged message in the mailbox of %q (key %x, after %d whole ones: %v); its other mailboxes are whole", e.nick, e.key, e.n, e.err)
}

// claimDamage is a claim of chat.db that does not decode.
type claimDamage struct {
	nick string
	err  error // nil: it decodes, but its hash is not 32 bytes
}

func (e *claimDamage) Error() string {
	if e.err == nil {
		e.err = errors.New("its secret's hash is not 32 bytes")
	}
	return fmt.Sprintf("has a damaged claim of the nickname %q (%v)", e.nick, e.err)
}

// checkCheckpointed refuses a store whose log is there while chat.db is
// missing or empty. The log is created right after chat.db's first commit
// (bbolt's, synced) and only ever emptied by a checkpoint into chat.db:
// chat.db must exist, whole (checkStoreFile checks the rest), or the
// messages of every checkpoint are gone with it, without a word.
func checkCheckpointed(path, walPath string) error {
	if _, err := os.Stat(walPath); err != nil {
		return nil // a new store (or no log to read: Open says so)
	}
	fi, err := os.Stat(path)
	what := ""
	switch {
	case errors.Is(err, os.ErrNotExist):
		what = "is missing"
	case err == nil && fi.Size() == 0:
		what = "is empty (0 bytes)"
	default:
		return nil
	}
	return fmt.Errorf("%w: %s %s while its log %s is there: the store was created here and every checkpoint wrote into it, so what it held is gone; restore %s from a backup or, to start again with an empty store, move it away too (mv %s %s.orphan)",
		ErrDamaged, path, what, walPath, path, walPath, walPath)
}

// Stats is where the store's data lies, for tests and diagnostics.
type Stats struct {
	LogBytes  int64 // the log's size: the records since the last checkpoint
	MemEvents int   // events put since the last checkpoint (in the log and the memtable)
	DBEvents  int   // events in chat.db
}

// Stats tells where the store's data lies now. The writing goroutine calls it.
func (s *Store) Stats() (Stats, error) {
	st := Stats{LogBytes: s.wal.size.Load(), MemEvents: len(s.mem.ids)}
	err := guarded(func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			if b := tx.Bucket(bucketLog); b != nil {
				st.DBEvents = b.Stats().KeyN
			}
			return nil
		})
	})
	return st, err
}

// Close checkpoints and closes the files. When the checkpoint fails, its
// log is kept, and the pages it wrote past chat.db's own and the room
// held for them go back to the disk.
func (s *Store) Close() error {
	err := s.Checkpoint()
	keep := s.room.end + s.room.held
	err = errors.Join(err, s.wal.f.Close(), s.db.Close(), s.room.f.Close())
	if err != nil && isNoSpace(err) {
		err = errors.Join(err, giveBack(s.path, keep))
	}
	return err
}

// holdRoom opens chat.db for the room held past its pages (room.go) and
// holds the room to take in records, the log's, at open.
func holdRoom(db *bolt.DB, path string, records [][]byte) (room, error) {
	var r room
	var need roomNeed
	boxes := map[string]struct{}{}
	for _, rec := range records {
		decodeChanges(rec, func(c walChange) error { need.add(c, boxes); return nil })
	}
	err := guarded(func() error {
		return db.View(func(tx *bolt.Tx) error {
			free, ps := dbFree(db)
			r.moved(tx.Size(), free, ps)
			return nil
		})
	})
	if err != nil {
		return r, err
	}
	if r.f, err = os.OpenFile(path, os.O_RDWR, 0); err != nil {
		return r, err
	}
	return r, r.reserve(r.need(need))
}

// IDKey is the key of id in the log and in a mailbox: big-endian, so that keys
// sort as ids do.
func IDKey(id uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], id)
	return k[:]
}

// IDBlock is how many event ids ReserveIDs reserves past the last one
// asked for: one record (and its sync) per block of ids rather than per
// batch. A login's welcome lines take ids and store nothing else, so
// most logins write nothing and wait for no sync of their own.
const IDBlock = 1024

// ReserveIDs makes the event ids up to last safe to hand out with the
// batch: ids are stored as reserved before any is handed out, and a
// restart goes on after the last id reserved (State.Seq), so ids only
// grow across a crash. When last is past the ids reserved, the batch
// stores the end of a new block (last+IDBlock); when it is not, the batch
// writes nothing for them and waits only for the record that reserved
// them to be synced (Write's end).
func ReserveIDs(tx *Tx, last uint64) error {
	s := tx.s
	if last <= s.ids {
		tx.waitFor = max(tx.waitFor, s.idsEnd)
		return nil
	}
	ids, end := s.ids, s.idsEnd
	tx.undo = append(tx.undo, func() { s.ids, s.idsEnd = ids, end })
	s.ids, tx.reserved = last+IDBlock, true
	tx.putMeta(keySeq, IDKey(s.ids))
	return nil
}

// PutRecord stores r under its id, above every id stored before.
func PutRecord(tx *Tx, r *Record) error {
	v, err := encodeValue(r)
	if err != nil {
		return err
	}
	tx.putEvent(r.ID, v)
	return nil
}

// DeleteRecord deletes the event id.
func DeleteRecord(tx *Tx, id uint64) error {
	tx.deleteEvent(id)
	return nil
}

// AddMail adds m to nick's mailbox, under the mailbox's next key.
func AddMail(tx *Tx, nick string, m *Mail) error {
	v, err := encodeValue(m)
	if err != nil {
		return err
	}
	box, err := tx.box(nick)
	if err != nil {
		return err
	}
	seq := box.seq
	tx.undo = append(tx.undo, func() { box.seq = seq })
	box.seq++
	tx.putMail(nick, box, IDKey(box.seq), v)
	return nil
}

// ReadMail returns nick's waiting messages, oldest first.
func ReadMail(tx *Tx, nick string) ([]MailEntry, error) {
	view, err := tx.view()
	if err != nil {
		return nil, err
	}
	return tx.m.readMail(view, nick)
}

// PutMail stores e back into nick's mailbox.
func PutMail(tx *Tx, nick string, e *MailEntry) error {
	v, err := encodeValue(&e.Mail)
	if err != nil {
		return err
	}
	box, err := tx.box(nick)
	if err != nil {
		return err
	}
	tx.putMail(nick, box, e.Key, v)
	return nil
}

// DeleteMail removes the entries with keys from nick's mailbox, and the
// mailbox itself when empty says the caller counted none left.
func DeleteMail(tx *Tx, nick string, keys [][]byte, empty bool) error {
	if empty {
		tx.dropBox(nick)
		return nil
	}
	box, err := tx.box(nick)
	if err != nil {
		return err
	}
	for _, k := range keys {
		tx.deleteMail(nick, box, k)
	}
	return nil
}

// PutClaim stores nick's claim.
func PutClaim(tx *Tx, nick string, c *Claim) error {
	v, err := encodeValue(c)
	if err != nil {
		return err
	}
	tx.setClaim(nick, v)
	tx.logPut(pathClaims, []byte(nick), v)
	return nil
}

// DeleteClaim deletes nick's claim, if there is one.
func DeleteClaim(tx *Tx, nick string) error {
	tx.setClaim(nick, nil)
	tx.m.dels++
	tx.path(walDelete, pathClaims, []byte(nick))
	return nil
}

// ReadLog returns up to limit records with after < id <= upTo that nick can
// see, and the id to continue after (upTo when the range is exhausted).
func (s *Store) ReadLog(nick string, after, upTo uint64, limit int) ([]*Record, uint64, error) {
	s.mem.mu.RLock()
	defer s.mem.mu.RUnlock()
	out, next, err := s.mem.readLog(s.db, nick, after, upTo, limit)
	if err != nil {
		return nil, after, fmt.Errorf("read history: %w", err)
	}
	return out, next, nil
}

// Prune deletes up to max events of chat.db sent before cutoff, in one
// synced transaction (no log needed: nothing is answered meanwhile), and
// reports how many it deleted and the last id deleted (0: none). It looks
// first, so that an idle prune writes nothing. It runs right after a
// Checkpoint.
func (s *Store) Prune(cutoff time.Time, max int) (n int, last uint64, err error) {
	err = guarded(func() error {
		var due bool
		if err := s.db.View(func(tx *bolt.Tx) (err error) {
			due, err = pruneDue(tx, cutoff)
			return err
		}); err != nil || !due {
			return err
		}
		return s.db.Update(func(tx *bolt.Tx) (err error) {
			n, last, err = prune(tx, cutoff, max)
			return err
		})
	})
	return n, last, err
}

// PruneMail deletes the mails of chat.db sent before cutoff, in one synced
// transaction, and returns, for every mailbox it changed, how many are
// left. Like Prune, it looks first and runs right after a Checkpoint.
func (s *Store) PruneMail(cutoff time.Time) (left map[string]int, err error) {
	err = guarded(func() error {
		var due bool
		if err := s.db.View(func(tx *bolt.Tx) (err error) {
			due, err = pruneMailDue(tx, cutoff)
			return err
		}); err != nil || !due {
			return err
		}
		return s.db.Update(func(tx *bolt.Tx) (err error) {
			left, err = pruneMail(tx, cutoff)
			return err
		})
	})
	return left, err
}

// prune deletes up to max log records of chat.db older than cutoff and
// reports how many it deleted and the last id deleted (0: none), which it
// also stores. Ids grow with time, so it stops at the first younger record.
// It runs right after a checkpoint: the memtable is empty.
func prune(tx *bolt.Tx, cutoff time.Time, max int) (int, uint64, error) {
	var old [][]byte
	b := tx.Bucket(bucketLog)
	c := b.Cursor()
	for k, v := c.First(); k != nil && len(old) < max; k, v = c.Next() {
		var r Record
		if err := decodeValue(v, &r); err != nil {
			return 0, 0, fmt.Errorf("decode event %d: %w", binary.BigEndian.Uint64(k), err)
		}
		if r.Time >= cutoff.UnixNano() {
			break
		}
		old = append(old, bytes.Clone(k))
	}
	// Deleting behind a cursor skips keys in bbolt, so delete afterwards.
	for _, k := range old {
		if err := b.Delete(k); err != nil {
			return 0, 0, err
		}
	}
	if len(old) == 0 {
		return 0, 0, nil
	}
	last := old[len(old)-1]
	return len(old), binary.BigEndian.Uint64(last), tx.Bucket(bucketMeta).Put(keyPruned, last)
}

// pruneDue reports whether chat.db's oldest event is older than cutoff.
func pruneDue(tx *bolt.Tx, cutoff time.Time) (bool, error) {
	k, v := tx.Bucket(bucketLog).Cursor().First()
	if k == nil {
		return false, nil
	}
	var r Record
	if err := decodeValue(v, &r); err != nil {
		return false, fmt.Errorf("decode event %d: %w", binary.BigEndian.Uint64(k), err)
	}
	return r.Time < cutoff.UnixNano(), nil
}

// pruneMailDue reports whether a mailbox of chat.db holds a mail sent
// before cutoff.
func pruneMailDue(tx *bolt.Tx, cutoff time.Time) (bool, error) {
	errFound := errors.New("found")
	mb := tx.Bucket(bucketMailbox)
	err := mb.ForEachBucket(func(nick []byte) error {
		return mb.Bucket(nick).ForEach(func(k, v []byte) error {
			var m Mail
			if err := decodeValue(v, &m); err != nil {
				return fmt.Errorf("decode mailbox of %s: %w", nick, err)
			}
			if m.Time < cutoff.UnixNano() {
				return errFound
			}
			return nil
		})
	})
	if err == errFound {
		return true, nil
	}
	return false, err
}

// pruneMail deletes the mails of chat.db sent before cutoff and returns,
// for every mailbox it changed, how many are left. Like prune, it runs
// right after a checkpoint.
func pruneMail(tx *bolt.Tx, cutoff time.Time) (map[string]int, error) {
	mb := tx.Bucket(bucketMailbox)
	var nicks [][]byte
	if err := mb.ForEachBucket(func(k []byte) error {
		nicks = append(nicks, bytes.Clone(k))
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
			var m Mail
			if err := decodeValue(v, &m); err != nil {
				return fmt.Errorf("decode mailbox of %s: %w", nick, err)
			}
			if m.Time < cutoff.UnixNano() {
				old = append(old, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(old) == 0 {
			continue
		}
		if len(old) == n {
			err = mb.DeleteBucket(nick)
		} else {
			for _, k := range old {
				if err = b.Delete(k); err != nil {
					break
				}
			}
		}
		if err != nil {
			return nil, err
		}
		left[string(nick)] = n - len(old)
	}
	return left, nil
}
