package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// memtable holds the store's changes since the last checkpoint: they are in
// the log (chat.wal), the store of record between checkpoints, and not yet
// in chat.db, which a checkpoint writes in one synced bbolt transaction.
// Reads see the memtable over chat.db.
//
// Only the writer (under the hub's lock) changes it, holding mu; replays read it holding mu
// for reading, together with chat.db, so a checkpoint (which holds mu) never
// shows them a change twice or not at all.
type memtable struct {
	mu   sync.RWMutex
	meta map[string][]byte
	// The log events put since the checkpoint, ids ascending: every one is
	// above every id in chat.db (ids only grow).
	ids  []uint64
	vals [][]byte
	// The log events deleted since the checkpoint, in chat.db or above.
	deleted map[uint64]struct{}
	boxes   map[string]*memBox
	claims  map[string][]byte // nick → claim; nil: deleted
	bytes   int64             // the data put since the checkpoint, keys and values
	dels    int64             // the keys deleted since the checkpoint (the room a checkpoint needs)
}

// memBox is one mailbox's changes since the checkpoint.
type memBox struct {
	dropped bool              // chat.db's bucket of this mailbox was deleted: its entries are gone
	seq     uint64            // the last key handed out
	mails   map[string][]byte // key → mail; nil: deleted
}

func newMemtable() *memtable {
	return &memtable{meta: map[string][]byte{}, deleted: map[uint64]struct{}{}, boxes: map[string]*memBox{}, claims: map[string][]byte{}}
}

// reset empties the memtable once its changes are in chat.db.
func (m *memtable) reset() {
	clear(m.vals)
	m.meta, m.ids, m.vals = map[string][]byte{}, m.ids[:0], m.vals[:0]
	m.deleted, m.boxes, m.claims, m.bytes, m.dels = map[uint64]struct{}{}, map[string]*memBox{}, map[string][]byte{}, 0, 0
}

// need is what a checkpoint of the memtable writes (room.go).
func (m *memtable) need() roomNeed {
	return roomNeed{bytes: m.bytes, dels: m.dels, boxes: int64(len(m.boxes))}
}

func (m *memtable) empty() bool {
	return len(m.meta) == 0 && len(m.ids) == 0 && len(m.deleted) == 0 && len(m.boxes) == 0 && len(m.claims) == 0
}

// entryBytes is what a stored key and value are counted for (bbolt adds a
// 16-byte element header to each).
func entryBytes(key, value []byte) int64 { return int64(len(key) + len(value) + 16) }

// flush writes the memtable into tx (a checkpoint).
func (m *memtable) flush(tx *bolt.Tx) error {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	for k, v := range m.meta {
		if err := meta.Put([]byte(k), v); err != nil {
			return err
		}
	}
	lb, err := tx.CreateBucketIfNotExists(bucketLog)
	if err != nil {
		return err
	}
	lb.FillPercent = 1 // ids are appended in order: full pages
	for i, id := range m.ids {
		if _, gone := m.deleted[id]; gone {
			continue
		}
		if err := lb.Put(IDKey(id), m.vals[i]); err != nil {
			return err
		}
	}
	for id := range m.deleted {
		if err := lb.Delete(IDKey(id)); err != nil {
			return err
		}
	}
	cb, err := tx.CreateBucketIfNotExists(bucketClaims)
	if err != nil {
		return err
	}
	for nick, v := range m.claims {
		if v == nil {
			err = cb.Delete([]byte(nick))
		} else {
			err = cb.Put([]byte(nick), v)
		}
		if err != nil {
			return err
		}
	}
	mb, err := tx.CreateBucketIfNotExists(bucketMailbox)
	if err != nil {
		return err
	}
	for nick, box := range m.boxes {
		name := []byte(nick)
		if box.dropped && mb.Bucket(name) != nil {
			if err := mb.DeleteBucket(name); err != nil {
				return err
			}
		}
		live := 0
		for _, v := range box.mails {
			if v != nil {
				live++
			}
		}
		b := mb.Bucket(name)
		if b == nil && live == 0 {
			continue
		}
		if b == nil {
			if b, err = mb.CreateBucket(name); err != nil {
				return err
			}
		}
		for k, v := range box.mails {
			if v == nil {
				err = b.Delete([]byte(k))
			} else {
				err = b.Put([]byte(k), v)
			}
			if err != nil {
				return err
			}
		}
		if err := b.SetSequence(box.seq); err != nil {
			return err
		}
	}
	return nil
}

// readLog is store.readLog's work with mu held for reading.
func (m *memtable) readLog(db *bolt.DB, nick string, after, upTo uint64, limit int) ([]*Record, uint64, error) {
	var out []*Record
	take := func(id uint64, v []byte) (bool, error) {
		if _, gone := m.deleted[id]; gone {
			return false, nil
		}
		r := &Record{ID: id}
		if err := decodeValue(v, r); err != nil {
			return false, fmt.Errorf("decode event %d: %w", id, err)
		}
		if r.visibleTo(nick) {
			out = append(out, r)
			return len(out) == limit, nil
		}
		return false, nil
	}
	// chat.db holds the ids below the memtable's first.
	dbTo := upTo
	if len(m.ids) > 0 && m.ids[0]-1 < dbTo {
		dbTo = m.ids[0] - 1
	}
	if after < dbTo {
		full := false
		err := guarded(func() error {
			return db.View(func(tx *bolt.Tx) error {
				c := tx.Bucket(bucketLog).Cursor()
				for k, v := c.Seek(IDKey(after + 1)); k != nil; k, v = c.Next() {
					id := binary.BigEndian.Uint64(k)
					if id > dbTo {
						break
					}
					var err error
					if full, err = take(id, v); err != nil || full {
						return err
					}
				}
				return nil
			})
		})
		if err != nil {
			return nil, after, err
		}
		if full {
			return out, out[len(out)-1].ID, nil
		}
	}
	i, _ := slices.BinarySearch(m.ids, after+1)
	for ; i < len(m.ids) && m.ids[i] <= upTo; i++ {
		full, err := take(m.ids[i], m.vals[i])
		if err != nil {
			return nil, after, err
		}
		if full {
			return out, m.ids[i], nil
		}
	}
	return out, upTo, nil
}

// ReadMail returns nick's waiting messages, oldest first: those of chat.db
// (view, nil when there is none yet) under the memtable's.
func (m *memtable) readMail(view *bolt.Tx, nick string) ([]MailEntry, error) {
	box := m.boxes[nick]
	var out []MailEntry
	decode := func(k, v []byte) error {
		e := MailEntry{Key: bytes.Clone(k)}
		if err := decodeValue(v, &e.Mail); err != nil {
			return fmt.Errorf("decode mailbox of %s: %w", nick, err)
		}
		out = append(out, e)
		return nil
	}
	if (box == nil || !box.dropped) && view != nil {
		if b := view.Bucket(bucketMailbox).Bucket([]byte(nick)); b != nil {
			err := b.ForEach(func(k, v []byte) error {
				if box != nil {
					if _, changed := box.mails[string(k)]; changed {
						return nil
					}
				}
				return decode(k, v)
			})
			if err != nil {
				return nil, err
			}
		}
	}
	if box != nil {
		for k, v := range box.mails {
			if v != nil {
				if err := decode([]byte(k), v); err != nil {
					return nil, err
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b MailEntry) int { return bytes.Compare(a.Key, b.Key) })
	return out, nil
}
