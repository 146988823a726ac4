package store

import (
	"errors"
	"fmt"
	"os"
)

// Room for the next checkpoint.
//
// Between two checkpoints the log holds what chat.db does not: a
// checkpoint (or, at open, the application of the log) writes it into
// chat.db, whose pages it takes from chat.db's free pages or past its
// last one. On a nearly full disk the log could hold more than chat.db has
// room to take in: the checkpoint at shutdown, and every start after it,
// would fail on the full disk, each attempt's pages left in chat.db. So
// the store keeps the room a checkpoint of what the log holds may take
// allocated in chat.db past its last page (fallocate with
// FALLOC_FL_KEEP_SIZE: the blocks are the file's, its size unchanged, and
// bbolt writes into them when it grows), before the log's record of a
// batch is written: a batch whose room cannot be had is refused with
// ErrNoRoom (507) and nothing of it is stored or answered. At open the
// room for the log's records is taken the same way before they are
// applied. A checkpoint or an application that fails all the same (a
// filesystem without fallocate, or another process that filled the disk
// before the room was taken) leaves chat.db as it was, cut back to its
// pages and the room kept for them (giveBack): nothing is lost, the log is
// still there, and chat.db does not grow from one failed start to the next.

// ErrNoRoom is wrapped by the error of a batch refused because the disk
// holding the store is full: no room for its log's record, or for the
// checkpoint of what the log would hold.
var ErrNoRoom = errors.New("no room left on the disk of the chat store")

// roomChunk is what the room grows by at least, so that a batch rarely
// calls fallocate.
const roomChunk = 1 << 20

// roomNeed counts what a checkpoint writes: the bytes put (keys and values,
// counted as entryBytes), the keys deleted and the mailboxes touched.
type roomNeed struct {
	bytes, dels, boxes int64
}

// size bounds the bytes of pages a bbolt transaction writing n allocates
// (tx.allocate, whether from the free list or past the last page), for a
// store whose pages (of pageSize) end at end, freePages of them free. A
// leaf is split at half a page: twice the data put, at most (a node of two
// elements that just pass half a page each takes two pages, a large value
// its pages and at most one more). Besides, what the transaction rewrites
// and the last, partly filled page of each node it writes: a deleted key
// rewrites its leaf (two pages, for a leaf of large values), a touched
// mailbox its last leaf and the path to it (four pages), but all of that
// together is at most every page of chat.db written again at half a page
// and a partly filled page for each new node (no more than twice the data
// put again). Then the buckets' roots and the meta page (sixteen pages), a
// sixteenth more for the pages' rounding and the free list of the pages
// the transaction frees (8 bytes a page), and the free list (8 bytes for
// each free page).
func (n roomNeed) size(pageSize, freePages, end int64) int64 {
	base := 2*n.bytes + 16*pageSize + min(pageSize*(2*n.dels+4*n.boxes), 2*end+2*n.bytes)
	return base + base/16 + 8*freePages
}

// add counts one change of the log (at open).
func (n *roomNeed) add(c walChange, boxes map[string]struct{}) {
	switch c.kind {
	case walPut:
		n.bytes += entryBytes(c.key, c.value)
	case walDelete:
		n.dels++
	}
	box := ""
	switch {
	case len(c.path) == 2:
		box = string(c.path[1])
	case c.kind == walDeleteBucket:
		box = string(c.key)
	default:
		return
	}
	if _, seen := boxes[box]; !seen {
		boxes[box] = struct{}{}
		n.boxes++
	}
}

// room is the store's hold on the room past chat.db's last page.
type room struct {
	f        *os.File // chat.db, a second descriptor for fallocate
	end      int64    // the end of chat.db's last page, at the last checkpoint
	freePgs  int64    // chat.db's free pages then
	pageSize int64
	held     int64 // allocated from end up to end+held (by this process)
	noAlloc  bool  // the filesystem has no fallocate: no room is held
}

// need is the room a checkpoint of n takes.
func (r *room) need(n roomNeed) int64 { return n.size(r.pageSize, r.freePgs, r.end) }

// reserve makes sure need bytes past chat.db's last page are allocated,
// taking a chunk more when it can; ErrNoRoom when the disk has not
// enough.
func (r *room) reserve(need int64) error {
	if r.noAlloc || need <= r.held {
		return nil
	}
	for _, want := range []int64{need + max(roomChunk, need/8), need} {
		err := allocate(r.f, r.end+r.held, want-r.held)
		if err == nil {
			r.held = want
			return nil
		}
		if errors.Is(err, errNoAllocate) {
			r.noAlloc = true
			return nil
		}
		if !errors.Is(err, errNoSpace) {
			return fmt.Errorf("hold room for the next checkpoint in %s: %w", r.f.Name(), err)
		}
	}
	return fmt.Errorf("%w: %s needs %d bytes past its %d for the checkpoint of what its log holds (%s): free space on that disk; the messages already answered are kept",
		ErrNoRoom, r.f.Name(), need, r.end, freeSpace(r.f.Name()))
}

// moved sets chat.db's end and free pages after a checkpoint: the room
// held past the old end, less what the checkpoint took, is still held, up
// to a chunk; the rest goes back to the disk (a hole punched past chat.db's
// pages), so that what a large checkpoint needed is not held for good.
func (r *room) moved(end, freePgs, pageSize int64) {
	if r.end > 0 || r.held > 0 {
		r.held = max(0, r.end+r.held-end)
	}
	r.end, r.freePgs, r.pageSize = end, freePgs, pageSize
	if r.f != nil && !r.noAlloc && r.held > 2*roomChunk {
		if release(r.f, r.end+roomChunk, r.held-roomChunk) == nil {
			r.held = roomChunk
		}
	}
}

// giveBack cuts chat.db, closed, back to its pages and the room held for
// them, after a checkpoint or an application of the log that failed: the
// pages that attempt wrote past them go back to the disk.
func giveBack(path string, keep int64) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() <= keep || keep <= 0 {
		return err
	}
	if err := os.Truncate(path, keep); err != nil {
		return fmt.Errorf("give back the pages of a failed checkpoint in %s: %w", path, err)
	}
	return nil
}

// isNoSpace reports whether err is a full disk's.
func isNoSpace(err error) bool { return errors.Is(err, errNoSpace) }
