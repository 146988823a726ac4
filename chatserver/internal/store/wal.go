package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// The write-ahead log (chat.wal beside chat.db) is the store of record
// between two checkpoints: a store commit costs one append and one
// fdatasync (~0.12 ms on a virtual disk, where bbolt's own commit, which
// syncs its pages and then its meta page, costs 1.5-3 ms). Each batch's
// changes go to the memtable (memtable.go) and, as one record, to the log,
// synced before anything of the batch is delivered or answered; chat.db is
// not touched. A checkpoint (every CheckpointBytes of log, at each prune
// and at close) writes the memtable into chat.db in one synced bbolt
// transaction and empties the log. At open, the log's records are applied
// again to chat.db (every change is a put or a delete of a whole value:
// applying one twice changes nothing) in one synced transaction, and the
// log emptied. chat.db is never written without a sync, so a crash of the
// machine leaves it whole, as of its last checkpoint.
//
// A record is: length (4 bytes, little endian), CRC-32C of the payload
// (4 bytes), payload. The payload is a list of changes: a kind byte, the
// bucket path (a count, then each name), the key and, for a put, the value,
// each a uvarint length and its bytes.
//
// A record cut short at the end of the log (a crash while it was written:
// its batch was never answered) is dropped with a warning. A record whose
// checksum is wrong, or that does not decode, followed by more of the log
// is damage: the store is refused at open with ErrDamaged. So is a record
// whose length runs past the end of the log while a whole record (its
// checksum matching, its changes decoding) lies within what follows the
// header: its length was damaged, and dropping it as torn would drop it
// and every acknowledged record after it.

// CheckpointBytes is the log's size that makes a checkpoint.
const CheckpointBytes = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	walPut byte = iota + 1
	walDelete
	walDeleteBucket
)

// Tx is one batch's writes. Each change goes to the memtable at once (the
// batch's later reads see it) and to the payload of the batch's log record;
// undo (with metaOld, logLen and bytes) brings the memtable back if the
// batch fails. The hub records there too what it must undo of its own
// memory. The store keeps one, reused batch after batch.
type Tx struct {
	s       *Store
	m       *memtable
	buf     []byte    // the batch's log record: its header's room, then the payload
	undo    []func()  // run newest first on failure
	metaOld []metaOld // meta values the batch replaced
	logLen  int       // len(m.ids) before the batch
	bytes   int64     // m.bytes before the batch
	rtx     *bolt.Tx  // a read transaction of chat.db, opened on first use
}

// metaOld is a meta value as it was before a batch (had: there was one).
type metaOld struct {
	key, value []byte
	had        bool
}

// walHeader is the size of a record's header: length and checksum.
const walHeader = 8

// OnUndo adds f to what a failed batch runs, newest first: the caller's
// way to bring back its own memory as it was before the batch.
func (t *Tx) OnUndo(f func()) { t.undo = append(t.undo, f) }

func (t *Tx) begin(s *Store) {
	t.s, t.m = s, s.mem
	t.buf = append(t.buf[:0], make([]byte, walHeader)...)
	t.logLen, t.bytes = len(t.m.ids), t.m.bytes
}

// changed reports whether the batch wrote anything.
func (t *Tx) changed() bool { return len(t.buf) > walHeader }

// end forgets the batch, keeping the buffers (unless they grew large).
func (t *Tx) end() {
	clear(t.undo)
	clear(t.metaOld)
	t.undo, t.metaOld = t.undo[:0], t.metaOld[:0]
	if cap(t.buf) > 1<<20 {
		t.buf = nil
	}
}

func (t *Tx) path(kind byte, path [][]byte, key []byte) {
	t.buf = append(t.buf, kind, byte(len(path)))
	for _, p := range path {
		t.buf = binary.AppendUvarint(t.buf, uint64(len(p)))
		t.buf = append(t.buf, p...)
	}
	t.buf = binary.AppendUvarint(t.buf, uint64(len(key)))
	t.buf = append(t.buf, key...)
}

func (t *Tx) logPut(path [][]byte, key, value []byte) {
	t.path(walPut, path, key)
	t.buf = binary.AppendUvarint(t.buf, uint64(len(value)))
	t.buf = append(t.buf, value...)
	t.m.bytes += entryBytes(key, value)
}

// view is a read transaction of chat.db for the batch.
func (t *Tx) view() (*bolt.Tx, error) {
	if t.rtx == nil {
		rtx, err := t.s.db.Begin(false)
		if err != nil {
			return nil, fmt.Errorf("read store: %w", err)
		}
		t.rtx = rtx
	}
	return t.rtx, nil
}

func (t *Tx) closeView() {
	if t.rtx != nil {
		t.rtx.Rollback()
		t.rtx = nil
	}
}

// rollback brings the memtable back to what it was before the batch.
func (t *Tx) rollback() {
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
	for i := len(t.metaOld) - 1; i >= 0; i-- {
		if o := t.metaOld[i]; o.had {
			t.m.meta[string(o.key)] = o.value
		} else {
			delete(t.m.meta, string(o.key))
		}
	}
	clear(t.m.vals[t.logLen:])
	t.m.ids, t.m.vals = t.m.ids[:t.logLen], t.m.vals[:t.logLen]
	t.m.bytes = t.bytes
}

func (t *Tx) putMeta(key, value []byte) {
	old, had := t.m.meta[string(key)]
	t.metaOld = append(t.metaOld, metaOld{key, old, had})
	t.m.meta[string(key)] = value
	t.logPut(pathMeta, key, value)
}

// putEvent stores the log event id, above every id stored before.
func (t *Tx) putEvent(id uint64, value []byte) {
	t.m.ids = append(t.m.ids, id)
	t.m.vals = append(t.m.vals, value)
	t.logPut(pathLog, IDKey(id), value)
}

func (t *Tx) deleteEvent(id uint64) {
	if _, gone := t.m.deleted[id]; !gone {
		t.m.deleted[id] = struct{}{}
		t.undo = append(t.undo, func() { delete(t.m.deleted, id) })
	}
	t.path(walDelete, pathLog, IDKey(id))
}

// box is nick's mailbox in the memtable, added (with chat.db's sequence)
// if missing.
func (t *Tx) box(nick string) (*memBox, error) {
	if b := t.m.boxes[nick]; b != nil {
		return b, nil
	}
	view, err := t.view()
	if err != nil {
		return nil, err
	}
	b := &memBox{mails: map[string][]byte{}}
	if db := view.Bucket(bucketMailbox).Bucket([]byte(nick)); db != nil {
		b.seq = db.Sequence()
	}
	t.m.boxes[nick] = b
	t.undo = append(t.undo, func() { delete(t.m.boxes, nick) })
	return b, nil
}

func (t *Tx) setMail(box *memBox, key, value []byte) {
	old, had := box.mails[string(key)]
	t.undo = append(t.undo, func() {
		if had {
			box.mails[string(key)] = old
		} else {
			delete(box.mails, string(key))
		}
	})
	box.mails[string(key)] = value
}

func (t *Tx) putMail(nick string, box *memBox, key, value []byte) {
	t.setMail(box, key, value)
	t.logPut(mailPath(nick), key, value)
}

func (t *Tx) deleteMail(nick string, box *memBox, key []byte) {
	t.setMail(box, key, nil)
	t.path(walDelete, mailPath(nick), key)
}

// dropBox deletes nick's mailbox, in chat.db too.
func (t *Tx) dropBox(nick string) {
	old, had := t.m.boxes[nick]
	t.undo = append(t.undo, func() {
		if had {
			t.m.boxes[nick] = old
		} else {
			delete(t.m.boxes, nick)
		}
	})
	t.m.boxes[nick] = &memBox{dropped: true, mails: map[string][]byte{}}
	t.path(walDeleteBucket, [][]byte{bucketMailbox}, []byte(nick))
}

// wal is the open log file. The hub goroutine writes records; the syncer
// syncs them (an fdatasync covers every write made before it).
type wal struct {
	f      *os.File
	size   atomic.Int64 // bytes written
	synced atomic.Int64 // bytes known to be on disk
	noSync bool
}

// write appends one record, unsynced: rec is the record's header's room
// (walHeader bytes, filled here), then its payload.
func (w *wal) write(rec []byte) error {
	payload := rec[walHeader:]
	binary.LittleEndian.PutUint32(rec, uint32(len(payload)))
	binary.LittleEndian.PutUint32(rec[4:], crc32.Checksum(payload, castagnoli))
	size := w.size.Load()
	if _, err := w.f.WriteAt(rec, size); err != nil {
		// A part of the record may be in the file: the next one overwrites it.
		return fmt.Errorf("write log: %w", err)
	}
	w.size.Store(size + int64(len(rec)))
	return nil
}

// syncTo makes the log durable at least up to end.
func (w *wal) syncTo(end int64) error {
	if w.noSync || w.synced.Load() >= end {
		return nil
	}
	target := w.size.Load() // every write up to here is covered by this sync
	if err := fdatasync(w.f); err != nil {
		return fmt.Errorf("sync log: %w", err)
	}
	w.synced.Store(target)
	return nil
}

// reset empties the log once its changes are safely in chat.db.
// Nothing may write or sync the log meanwhile.
func (w *wal) reset() error {
	if w.size.Load() == 0 {
		return nil
	}
	if err := w.f.Truncate(0); err != nil {
		return fmt.Errorf("empty log: %w", err)
	}
	w.size.Store(0)
	w.synced.Store(0)
	// Synced even with noSync: records written from offset 0 again must
	// never sit on the disk before older ones that a crash would replay
	// after them.
	return w.f.Sync()
}

// walDamage is what recovery found wrong with the log.
type walDamage struct {
	torn   bool // only the last record, cut short: dropped
	offset int64
	what   string
}

// readWAL returns the payloads of the log's whole records, and what was
// wrong past them (nil: nothing).
func readWAL(data []byte) ([][]byte, *walDamage) {
	var out [][]byte
	off := 0
	for off < len(data) {
		rest := data[off:]
		if len(rest) < 8 {
			return out, &walDamage{torn: true, offset: int64(off), what: fmt.Sprintf("a record header cut short (%d bytes)", len(rest))}
		}
		n := int(binary.LittleEndian.Uint32(rest))
		sum := binary.LittleEndian.Uint32(rest[4:])
		if n == 0 && sum == 0 && allZero(rest) {
			return out, &walDamage{torn: true, offset: int64(off), what: fmt.Sprintf("%d zero bytes", len(rest))}
		}
		if n == 0 {
			// Never written: a batch without changes has no record.
			return out, &walDamage{offset: int64(off), what: "a record of length 0"}
		}
		if 8+n > len(rest) || n < 0 {
			if m, ok := wholeRecordWithin(rest[8:], sum); ok {
				return out, &walDamage{offset: int64(off), what: fmt.Sprintf("a damaged record length (%d bytes, past the end of the log %d bytes on, while the first %d bytes are a whole record, its checksum matching)", n, len(rest)-8, m)}
			}
			return out, &walDamage{torn: true, offset: int64(off), what: fmt.Sprintf("a record of %d bytes with %d left in the file", n, len(rest)-8)}
		}
		payload := rest[8 : 8+n]
		last := 8+n == len(rest)
		if crc32.Checksum(payload, castagnoli) != sum {
			if m, ok := wholeRecordWithin(payload, sum); last && ok {
				return out, &walDamage{offset: int64(off), what: fmt.Sprintf("a damaged record length (%d bytes, to the end of the log, while the first %d bytes are a whole record, its checksum matching)", n, m)}
			} else if last {
				return out, &walDamage{torn: true, offset: int64(off), what: "a last record whose checksum does not match"}
			}
			return out, &walDamage{offset: int64(off), what: "a record whose checksum does not match, with more of the log after it"}
		}
		if err := checkPayload(payload); err != nil {
			return out, &walDamage{torn: false, offset: int64(off), what: "a record that does not decode: " + err.Error()}
		}
		out = append(out, payload)
		off += 8 + n
	}
	return out, nil
}

// wholeRecordWithin reports whether a prefix of b (m bytes) has the
// checksum sum and decodes: the payload of a record whose length is wrong.
// A record cut short has no such prefix but by a 1 in 2^32 chance, which
// decoding then refuses.
func wholeRecordWithin(b []byte, sum uint32) (m int, ok bool) {
	crc := uint32(0)
	for i := range b {
		crc = crc32.Update(crc, castagnoli, b[i:i+1])
		if crc == sum && checkPayload(b[:i+1]) == nil {
			return i + 1, true
		}
	}
	return 0, false
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// walChange is one decoded change of a record.
type walChange struct {
	kind       byte
	path       [][]byte
	key, value []byte
}

// decodeChanges calls f for each change of payload.
func decodeChanges(payload []byte, f func(walChange) error) error {
	r := bytes.NewReader(payload)
	field := func() ([]byte, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, errors.New("field length cut short")
		}
		if n > uint64(r.Len()) {
			return nil, fmt.Errorf("field of %d bytes with %d left", n, r.Len())
		}
		b := make([]byte, n)
		io.ReadFull(r, b)
		return b, nil
	}
	for r.Len() > 0 {
		var c walChange
		c.kind, _ = r.ReadByte()
		if c.kind < walPut || c.kind > walDeleteBucket {
			return fmt.Errorf("unknown change kind %d", c.kind)
		}
		np, err := r.ReadByte()
		if err != nil || np == 0 || np > 2 {
			return fmt.Errorf("bucket path of %d names", np)
		}
		for range np {
			p, err := field()
			if err != nil {
				return err
			}
			c.path = append(c.path, p)
		}
		if c.key, err = field(); err != nil {
			return err
		}
		if c.kind == walPut {
			if c.value, err = field(); err != nil {
				return err
			}
		}
		if err := f(c); err != nil {
			return err
		}
	}
	return nil
}

func checkPayload(p []byte) error { return decodeChanges(p, func(walChange) error { return nil }) }

// bucketAt is the bucket at path, created when create is set.
func bucketAt(tx *bolt.Tx, path [][]byte, create bool) (*bolt.Bucket, error) {
	var b *bolt.Bucket
	for i, p := range path {
		var nb *bolt.Bucket
		if i == 0 {
			nb = tx.Bucket(p)
		} else {
			nb = b.Bucket(p)
		}
		if nb == nil {
			if !create {
				return nil, nil
			}
			var err error
			if i == 0 {
				nb, err = tx.CreateBucketIfNotExists(p)
			} else {
				nb, err = b.CreateBucketIfNotExists(p)
			}
			if err != nil {
				return nil, err
			}
		}
		b = nb
	}
	return b, nil
}

// applyChange applies one change of the log to tx again.
func applyChange(tx *bolt.Tx, c walChange) error {
	switch c.kind {
	case walPut:
		b, err := bucketAt(tx, c.path, true)
		if err != nil {
			return err
		}
		if err := b.Put(c.key, c.value); err != nil {
			return err
		}
		// A mailbox's keys come from its sequence: keep it past them.
		if len(c.path) == 2 && len(c.key) == 8 {
			if k := binary.BigEndian.Uint64(c.key); k > b.Sequence() {
				return b.SetSequence(k)
			}
		}
	case walDelete:
		b, err := bucketAt(tx, c.path, false)
		if err != nil || b == nil {
			return err
		}
		return b.Delete(c.key)
	case walDeleteBucket:
		b := tx.Bucket(c.path[0])
		if b != nil && b.Bucket(c.key) != nil {
			return b.DeleteBucket(c.key)
		}
	}
	return nil
}
