package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
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
// The log begins with its header: walMagic, the log's epoch (8 bytes,
// little endian) and CRC-32C of those 16 bytes. chat.db keeps the epoch of
// the log that follows its last checkpoint (meta "walepoch"), and each
// checkpoint starts a new log of the next epoch, written beside the old one
// and renamed over it: the log is never missing, empty or half-written
// beside a store that expects it, and a log that is is refused, as is a
// log of another epoch (another store's, or an older copy).
//
// A record is: recordMagic (4 bytes), the payload's length (4 bytes,
// little endian), the record's sequence in its log (8 bytes: 1, 2, ...),
// CRC-32C (4 bytes) of the payload followed by the length, the sequence
// and the log's epoch, then the payload. The payload is a list of changes:
// a kind byte, the bucket path (a count, then each name), the key and, for
// a put, the value, each a uvarint length and its bytes.
//
// Recovery reads whole records in sequence. At the first that is not one,
// it looks on through the rest of the log for a whole record of this log
// (its marker, length, sequence and checksum all matching): if there is
// one, what lies before it was acknowledged, and the store is refused at
// open with ErrDamaged, naming the file and the offset. If there is none,
// only a write cut short at the end of the log is dropped (with a
// warning: its batch was never answered): the next record's header whole
// and its body running to or past the end, or a header cut short. A
// synced log is filled with zeros ahead of its records (fillStep), so the
// end is where only zeros follow, and a write cut short may have zeros
// after it.
// A record whose length was damaged (a whole record lies within it) and
// bytes that are no record of this log at all (a log of noise) are
// refused.
//
// A store written before the header and the sequence existed has no
// "walepoch": its log (records of length, CRC-32C of the payload, payload)
// is read by readWALv1 and applied once, and the store goes on with a log
// of epoch 1.

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
	dels    int64     // m.dels before the batch
	rtx     *bolt.Tx  // a read transaction of chat.db, opened on first use

	reserved bool  // the batch reserves ids (ReserveIDs)
	waitFor  int64 // where the record that reserved the batch's ids ends
}

// metaOld is a meta value as it was before a batch (had: there was one).
type metaOld struct {
	key, value []byte
	had        bool
}

// A record's header: recordMagic, then the payload's length, the record's
// sequence and its checksum at these offsets.
const (
	walHeader = 20
	lengthAt  = 4
	seqAt     = 8
	sumAt     = 16
)

// The log file's header: walMagic, the epoch, CRC-32C of both.
const walFileHeader = 20

var (
	walMagic    = []byte("CHATWAL\x02")
	recordMagic = []byte{0xc7, 'W', 'R', 0x02}
)

// recordSum is a record's checksum: CRC-32C of its payload, then of its
// length, sequence and the log's epoch (sealSum).
func recordSum(payload []byte, seq, epoch uint64) uint32 {
	return sealSum(crc32.Checksum(payload, castagnoli), len(payload), seq, epoch)
}

// sealSum ends a record's checksum: crc is CRC-32C of a payload of n bytes.
func sealSum(crc uint32, n int, seq, epoch uint64) uint32 {
	var b [20]byte
	binary.LittleEndian.PutUint32(b[:], uint32(n))
	binary.LittleEndian.PutUint64(b[4:], seq)
	binary.LittleEndian.PutUint64(b[12:], epoch)
	return crc32.Update(crc, castagnoli, b[:])
}

// sealRecord fills the header of rec (walHeader bytes, then the payload):
// record seq of the log of epoch.
func sealRecord(rec []byte, seq, epoch uint64) {
	payload := rec[walHeader:]
	copy(rec, recordMagic)
	binary.LittleEndian.PutUint32(rec[lengthAt:], uint32(len(payload)))
	binary.LittleEndian.PutUint64(rec[seqAt:], seq)
	binary.LittleEndian.PutUint32(rec[sumAt:], recordSum(payload, seq, epoch))
}

// logHeader is the header of an empty log of epoch.
func logHeader(epoch uint64) []byte {
	b := append([]byte(nil), walMagic...)
	b = binary.LittleEndian.AppendUint64(b, epoch)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// logEpoch reads the epoch from the header of a log, or says why data is
// not a log.
func logEpoch(data []byte) (uint64, error) {
	switch {
	case len(data) == 0:
		return 0, errors.New("is empty (0 bytes)")
	case len(data) < walFileHeader || !bytes.Equal(data[:len(walMagic)], walMagic):
		return 0, fmt.Errorf("does not begin with a chat log's header (%d bytes): it is not a chat log", len(data))
	case crc32.Checksum(data[:16], castagnoli) != binary.LittleEndian.Uint32(data[16:]):
		return 0, errors.New("has a damaged header (its checksum does not match)")
	}
	return binary.LittleEndian.Uint64(data[len(walMagic):]), nil
}

// OnUndo adds f to what a failed batch runs, newest first: the caller's
// way to bring back its own memory as it was before the batch.
func (t *Tx) OnUndo(f func()) { t.undo = append(t.undo, f) }

func (t *Tx) begin(s *Store) {
	t.s, t.m = s, s.mem
	t.buf = append(t.buf[:0], make([]byte, walHeader)...)
	t.logLen, t.bytes, t.dels = len(t.m.ids), t.m.bytes, t.m.dels
	t.reserved, t.waitFor = false, 0
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
	t.m.bytes, t.m.dels = t.bytes, t.dels
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
	t.m.dels++
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
	t.m.dels++
	t.path(walDelete, mailPath(nick), key)
}

// setClaim puts nick's claim (nil: deleted) into the memtable.
func (t *Tx) setClaim(nick string, value []byte) {
	old, had := t.m.claims[nick]
	t.undo = append(t.undo, func() {
		if had {
			t.m.claims[nick] = old
		} else {
			delete(t.m.claims, nick)
		}
	})
	t.m.claims[nick] = value
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

// wal is the open log file. The writer (under the hub's lock) writes records; the syncer
// syncs them (an fdatasync covers every write made before it).
type wal struct {
	f      *os.File
	path   string
	size   atomic.Int64 // bytes written
	synced atomic.Int64 // bytes known to be on disk
	noSync bool
	epoch  uint64 // the log's, in its header
	seq    uint64 // the last record's sequence (the writer)
	filled int64  // the file's size: past size, zeros (the writer)
}

// fillStep is how far ahead of its records a synced log is filled with
// zeros: a record written within them changes neither the file's size nor
// its extents, so its fdatasync writes data alone; one sync in fillStep
// bytes of log commits the file's new size. Recovery takes zeros after the
// last record for the end of the log (readWAL).
const fillStep = 1 << 20

var zeros [64 << 10]byte

// fill writes zeros from where the file ends to the fillStep past end.
// Where the disk has no room for them, the file is cut back and the log
// is written on without them.
func (w *wal) fill(end int64) {
	from := max(w.filled, w.size.Load())
	to := (end + fillStep - 1) / fillStep * fillStep
	for at := from; at < to; {
		n, err := w.f.WriteAt(zeros[:min(int64(len(zeros)), to-at)], at)
		if err != nil {
			w.f.Truncate(from)
			w.filled = from
			return
		}
		at += int64(n)
	}
	w.filled = to
}

// write appends one record, unsynced: rec is the record's header's room
// (walHeader bytes, filled here), then its payload.
func (w *wal) write(rec []byte) error {
	seq := w.seq + 1
	sealRecord(rec, seq, w.epoch)
	size := w.size.Load()
	if end := size + int64(len(rec)); end > w.filled && !w.noSync {
		w.fill(end)
	}
	if err := writeAt(w.f, rec, size); err != nil {
		// A part of the record may be in the file: cut it off, so that no
		// bytes of it lie past a shorter record written there next.
		w.f.Truncate(size)
		w.filled = size
		return w.failed("write", err)
	}
	w.seq = seq
	w.size.Store(size + int64(len(rec)))
	return nil
}

// failed is the error of the log's write or sync (op) that failed with
// err, naming the log (its file was opened under the name it was written
// beside it with); a full disk is ErrNoRoom.
func (w *wal) failed(op string, err error) error {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		err = pe.Err
	}
	if isNoSpace(err) {
		return fmt.Errorf("%w: %s log %s: %w (%s)", ErrNoRoom, op, w.path, err, freeSpace(w.path))
	}
	return fmt.Errorf("%s log %s: %w", op, w.path, err)
}

// syncTo makes the log durable at least up to end.
func (w *wal) syncTo(end int64) error {
	if w.noSync || w.synced.Load() >= end {
		return nil
	}
	target := w.size.Load() // every write up to here is covered by this sync
	if err := fdatasync(w.f); err != nil {
		return w.failed("sync", err)
	}
	w.synced.Store(target)
	return nil
}

// reset replaces the log, once its changes are safely in chat.db, by an
// empty one of epoch (the one chat.db now expects). Nothing may write or
// sync the log meanwhile.
func (w *wal) reset(epoch uint64) error {
	if w.f != nil && w.epoch == epoch && w.size.Load() == walFileHeader {
		return nil
	}
	if w.f != nil {
		// Its records are in chat.db: the room they take goes to the new
		// log first (a disk the log filled has none left for it). Cut short
		// to its header, it is a log chat.db no longer expects, which
		// Open replaces.
		w.f.Truncate(walFileHeader)
	}
	f, err := createLog(w.path, epoch)
	if err != nil {
		return err
	}
	if w.f != nil {
		w.f.Close()
	}
	w.f, w.epoch, w.seq, w.filled = f, epoch, 0, walFileHeader
	w.size.Store(walFileHeader)
	w.synced.Store(walFileHeader)
	return nil
}

// createLog makes the empty log of epoch at path: written beside it,
// synced (even with noSync) and renamed over it, the folder synced, so that
// the log is at every moment the old one or the new one, whole.
func createLog(path string, epoch uint64) (*os.File, error) {
	tmp := path + ".new"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("new log: %w", err)
	}
	err = func() error {
		if _, err := f.Write(logHeader(epoch)); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
		return syncDir(filepath.Dir(path))
	}()
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("new log %s: %w", path, err)
	}
	return f, nil
}

// walDamage is what recovery found wrong with the log.
type walDamage struct {
	torn   bool // only the last record, cut short: dropped
	offset int64
	what   string
}

// readWAL returns the payloads of the whole records of the log of epoch
// (data: what follows its header), and what was wrong past them (nil:
// nothing); offsets are data's.
func readWAL(data []byte, epoch uint64) ([][]byte, *walDamage) {
	var out [][]byte
	off := 0
	for off < len(data) && !allZero(data[off:]) { // zeros: the log's end (wal.fill)
		seq := uint64(len(out)) + 1
		n, got, ok := recordAt(data[off:], epoch)
		if !ok || got != seq {
			return out, damageAt(data, off, seq, epoch)
		}
		out = append(out, data[off+walHeader:off+walHeader+n])
		off += walHeader + n
	}
	return out, nil
}

// recordAt reports whether b begins with a whole record of the log of
// epoch: its marker, its length within b, its checksum matching and its
// changes decoding; n is its payload's length.
func recordAt(b []byte, epoch uint64) (n int, seq uint64, ok bool) {
	if len(b) < walHeader || !bytes.Equal(b[:len(recordMagic)], recordMagic) {
		return 0, 0, false
	}
	n64 := uint64(binary.LittleEndian.Uint32(b[lengthAt:]))
	if n64 == 0 || n64 > uint64(len(b)-walHeader) {
		return 0, 0, false
	}
	n, seq = int(n64), binary.LittleEndian.Uint64(b[seqAt:])
	payload := b[walHeader : walHeader+n]
	if recordSum(payload, seq, epoch) != binary.LittleEndian.Uint32(b[sumAt:]) || checkPayload(payload) != nil {
		return 0, 0, false
	}
	return n, seq, true
}

// damageAt says what lies at off of data, where record seq was expected
// and is not: the zeros the log was filled with ahead of its records
// (wal.fill) are past its end, and a record cut short is cut short
// whether they follow it or not.
func damageAt(data []byte, off int, seq, epoch uint64) *walDamage {
	rest := bytes.TrimRight(data[off:], "\x00")
	at := int64(off)
	// A whole record further on: what lies here was acknowledged.
	for p := off; p+walHeader <= len(data); p++ {
		if data[p] != recordMagic[0] {
			continue
		}
		if _, got, ok := recordAt(data[p:], epoch); ok && got >= seq {
			return &walDamage{offset: at, what: fmt.Sprintf("damage where record %d was expected, while whole records follow (record %d at byte %d)", seq, got, p)}
		}
	}
	headed := len(rest) >= walHeader && bytes.Equal(rest[:len(recordMagic)], recordMagic) && binary.LittleEndian.Uint64(rest[seqAt:]) == seq
	switch {
	case len(rest) < walHeader && bytes.HasPrefix(recordMagic, rest[:min(len(rest), len(recordMagic))]):
		return &walDamage{torn: true, offset: at, what: fmt.Sprintf("a record header cut short (%d bytes)", len(rest))}
	case headed:
		n := uint64(binary.LittleEndian.Uint32(rest[lengthAt:]))
		if m, ok := wholeRecordWithin(rest[walHeader:], binary.LittleEndian.Uint32(rest[sumAt:]), seq, epoch); ok && uint64(m) != n {
			return &walDamage{offset: at, what: fmt.Sprintf("a damaged record length (%d bytes, while the first %d bytes are a whole record, its checksum matching)", n, m)}
		}
		if walHeader+n >= uint64(len(rest)) {
			return &walDamage{torn: true, offset: at, what: fmt.Sprintf("a last record of %d bytes with %d written, or whose checksum does not match", n, len(rest)-walHeader)}
		}
		return &walDamage{offset: at, what: "a record whose checksum does not match, with more of the log after it"}
	}
	return &walDamage{offset: at, what: fmt.Sprintf("%d bytes that are not a record of this log (record %d was expected)", len(rest), seq)}
}

// wholeRecordWithin reports whether a prefix of b (m bytes) is the
// payload of record seq of the log of epoch: a record whose length is
// wrong. A record cut short has no such prefix but by a 1 in 2^32 chance,
// which decoding then refuses.
func wholeRecordWithin(b []byte, sum uint32, seq, epoch uint64) (m int, ok bool) {
	crc := uint32(0)
	for i := range b {
		crc = crc32.Update(crc, castagnoli, b[i:i+1])
		if sealSum(crc, i+1, seq, epoch) == sum && checkPayload(b[:i+1]) == nil {
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

// FirstRecordAt is the offset of a log's first record, RecordHeaderBytes
// the size of a record's header and LengthAt the offset of the payload's
// length (4 bytes, little endian) in it: where tests cut or damage a log.
const (
	FirstRecordAt     = walFileHeader
	RecordHeaderBytes = walHeader
	LengthAt          = lengthAt
)
