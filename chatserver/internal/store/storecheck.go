package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// ErrDamaged is wrapped by every error about a damaged store file: one
// that is truncated, overwritten or not a store at all.
var ErrDamaged = errors.New("chat store damaged")

// damaged says what is wrong with the store at path and what to do.
func damaged(path, what string) error {
	return fmt.Errorf("%w: %s %s: move it away (mv %s %s.damaged) and start again with an empty store, or restore it from a backup", ErrDamaged, path, what, path, path)
}

// guarded runs f, turning a panic or a memory fault inside it into an error
// wrapping ErrDamaged. bbolt reads the file through mmap: a page past
// the end of a truncated file faults, a page whose header is wrong panics.
func guarded(f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrDamaged, r)
		}
	}()
	return f()
}

// bbolt's file format (go.etcd.io/bbolt/internal/common): page 0 and page 1
// are meta pages, a 16-byte page header then the meta fields, in the byte
// order of the machine, with an FNV-64a checksum of the fields before it.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16
	metaSize         = 56 // magic … txid, then the 8-byte checksum
	boltNoFreelist   = ^uint64(0)
	minBoltPageBytes = 512
)

type boltMeta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	pgid     uint64 // the high-water mark: pages 0..pgid-1 exist
	txid     uint64
}

// readMeta decodes the meta page at off of f, or says why it is not one.
func readMeta(f io.ReaderAt, off int64) (boltMeta, error) {
	var b [pageHeaderSize + metaSize + 8]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return boltMeta{}, fmt.Errorf("read meta page at %d: %w", off, err)
	}
	m := b[pageHeaderSize:]
	le := binary.NativeEndian
	if le.Uint32(m[0:]) != boltMagic {
		return boltMeta{}, errors.New("no bbolt marker")
	}
	if v := le.Uint32(m[4:]); v != boltVersion {
		return boltMeta{}, fmt.Errorf("bbolt version %d, want %d", v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:metaSize])
	if le.Uint64(m[metaSize:]) != h.Sum64() {
		return boltMeta{}, errors.New("checksum mismatch")
	}
	return boltMeta{
		pageSize: le.Uint32(m[8:]),
		root:     le.Uint64(m[16:]),
		freelist: le.Uint64(m[32:]),
		pgid:     le.Uint64(m[40:]),
		txid:     le.Uint64(m[48:]),
	}, nil
}

// checkStoreFile checks the store file at path before bbolt maps it: a
// valid meta page, and a file long enough for every page the meta page
// counts (bbolt itself reads past the end of a truncated file and faults).
// A missing or empty file is fine: bbolt creates the store.
func checkStoreFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open store %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("open store %s: %w", path, err)
	}
	size := fi.Size()
	if size == 0 {
		return nil
	}
	m0, err0 := readMeta(f, 0)
	var best boltMeta
	var found bool
	if err0 == nil && m0.pageSize >= minBoltPageBytes {
		best, found = m0, true
	}
	// Meta page 1 sits one page in: try the page size of meta 0, else the usual ones.
	sizes := []int64{int64(os.Getpagesize()), 4096}
	if found {
		sizes = []int64{int64(m0.pageSize)}
	}
	var err1 error
	for _, ps := range sizes {
		var m1 boltMeta
		if m1, err1 = readMeta(f, ps); err1 == nil && int64(m1.pageSize) == ps {
			if !found || m1.txid > best.txid {
				best, found = m1, true
			}
			break
		}
	}
	if !found {
		if size < 2*minBoltPageBytes {
			return damaged(path, fmt.Sprintf("is %d bytes, too short to be a store", size))
		}
		return damaged(path, fmt.Sprintf("is not a chat store, or both its meta pages are damaged (%v; %v)", err0, err1))
	}
	ps := int64(best.pageSize)
	if need := int64(best.pgid) * ps; best.pgid < 2 || size < need {
		return damaged(path, fmt.Sprintf("is truncated: %d bytes, its meta page counts %d pages of %d bytes (%d bytes)", size, best.pgid, ps, need))
	}
	if best.root >= best.pgid || best.freelist != boltNoFreelist && best.freelist >= best.pgid {
		return damaged(path, fmt.Sprintf("has a meta page that points past its last page (root %d, freelist %d, pages %d)", best.root, best.freelist, best.pgid))
	}
	return nil
}

// verifyStore reads every page of the store that holds data, so damage
// found at open stops the server with a clear error instead of surfacing
// later: bbolt checks each page's header as it reads it.
func verifyStore(tx *bolt.Tx) error {
	var walk func(b *bolt.Bucket) error
	walk = func(b *bolt.Bucket) error {
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v == nil {
				if nb := b.Bucket(k); nb != nil {
					if err := walk(nb); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
		if err := walk(b); err != nil {
			return fmt.Errorf("bucket %s: %w", name, err)
		}
		return nil
	})
}
