package chatserver

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

// The write-ahead log (chat.wal beside chat.db) makes a store commit cost
// one append and one fdatasync. bbolt's own commit syncs twice (its pages,
// then its meta page) at 1.5-3 ms on a virtual disk, while an append and
// its fdatasync cost ~0.12 ms there. So bbolt runs with NoSync, and each
// transaction's changes are also appended to the log as one record, synced
// before anything of the batch is delivered or answered. A checkpoint
// (every walCheckpointBytes of log, at each prune and at close) syncs the
// bbolt file and empties the log. At open, the log's records are applied
// again to the bbolt file (every change is a put or a delete of a whole
// value: applying one twice changes nothing), which is synced, and the
// log emptied.
//
// A record is: length (4 bytes, little endian), CRC-32C of the payload
// (4 bytes), payload. The payload is a list of changes: a kind byte, the
// bucket path (a count, then each name), the key and, for a put, the value,
// each a uvarint length and its bytes.
//
// A record cut short at the end of the log (a crash while it was written:
// its batch was never answered) is dropped with a warning. A record whose
// checksum is wrong, or that does not decode, followed by more of the log
// is damage: the store is refused at open with ErrStoreDamaged.

const walCheckpointBytes = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	walPut byte = iota + 1
	walDelete
	walDeleteBucket
)

// wtx is a bbolt write transaction whose changes are also written to the log.
type wtx struct {
	*bolt.Tx
	buf []byte // the payload of this transaction's record
}

func (t *wtx) path(kind byte, path [][]byte, key []byte) {
	t.buf = append(t.buf, kind, byte(len(path)))
	for _, p := range path {
		t.buf = binary.AppendUvarint(t.buf, uint64(len(p)))
		t.buf = append(t.buf, p...)
	}
	t.buf = binary.AppendUvarint(t.buf, uint64(len(key)))
	t.buf = append(t.buf, key...)
}

// bucket is the bucket at path, created when create is set.
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

// put sets key to value in the bucket at path (created if missing).
func (t *wtx) put(path [][]byte, key, value []byte) error {
	b, err := bucketAt(t.Tx, path, true)
	if err != nil {
		return err
	}
	if err := b.Put(key, value); err != nil {
		return err
	}
	t.path(walPut, path, key)
	t.buf = binary.AppendUvarint(t.buf, uint64(len(value)))
	t.buf = append(t.buf, value...)
	return nil
}

// del deletes key from the bucket at path.
func (t *wtx) del(path [][]byte, key []byte) error {
	b, err := bucketAt(t.Tx, path, false)
	if err != nil || b == nil {
		return err
	}
	if err := b.Delete(key); err != nil {
		return err
	}
	t.path(walDelete, path, key)
	return nil
}

// delBucket deletes the bucket name inside the top-level bucket parent.
func (t *wtx) delBucket(parent, name []byte) error {
	b := t.Tx.Bucket(parent)
	if b == nil || b.Bucket(name) == nil {
		return nil
	}
	if err := b.DeleteBucket(name); err != nil {
		return err
	}
	t.path(walDeleteBucket, [][]byte{parent}, name)
	return nil
}

// wal is the open log file. The hub goroutine writes records; the syncer
// syncs them (an fdatasync covers every write made before it).
type wal struct {
	f      *os.File
	size   atomic.Int64 // bytes written
	synced atomic.Int64 // bytes known to be on disk
	noSync bool
	rec    []byte
}

// write appends one record with payload, unsynced.
func (w *wal) write(payload []byte) error {
	w.rec = binary.LittleEndian.AppendUint32(w.rec[:0], uint32(len(payload)))
	w.rec = binary.LittleEndian.AppendUint32(w.rec, crc32.Checksum(payload, castagnoli))
	w.rec = append(w.rec, payload...)
	size := w.size.Load()
	if _, err := w.f.WriteAt(w.rec, size); err != nil {
		// A part of the record may be in the file: the next one overwrites it.
		return fmt.Errorf("write log: %w", err)
	}
	w.size.Store(size + int64(len(w.rec)))
	if cap(w.rec) > 1<<20 {
		w.rec = nil
	}
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

// reset empties the log once its changes are safely in the bbolt file.
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
	if w.noSync {
		return nil
	}
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
		if 8+n > len(rest) || n < 0 {
			return out, &walDamage{torn: true, offset: int64(off), what: fmt.Sprintf("a record of %d bytes with %d left in the file", n, len(rest)-8)}
		}
		payload := rest[8 : 8+n]
		last := 8+n == len(rest)
		if crc32.Checksum(payload, castagnoli) != sum {
			return out, &walDamage{torn: last, offset: int64(off), what: "a record whose checksum does not match"}
		}
		if err := checkPayload(payload); err != nil {
			return out, &walDamage{torn: false, offset: int64(off), what: "a record that does not decode: " + err.Error()}
		}
		out = append(out, payload)
		off += 8 + n
	}
	return out, nil
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
