package store

import (
	"encoding/binary"
	"testing"
)

// testRecord is record seq of the log of epoch 1, putting text under id.
func testRecord(seq uint64, id uint64, text []byte) []byte {
	var tx Tx
	tx.buf = make([]byte, walHeader)
	tx.path(walPut, pathLog, IDKey(id))
	tx.buf = binary.AppendUvarint(tx.buf, uint64(len(text)))
	tx.buf = append(tx.buf, text...)
	sealRecord(tx.buf, seq, 1)
	return tx.buf
}

// FuzzLogRecovery: the log as a crash or a damaged disk may leave it.
// Reading it never panics; the records it returns are whole and decode;
// and whatever follows them, zeros aside (the log is filled ahead), is
// named (torn: only at the end).
func FuzzLogRecovery(f *testing.F) {
	one := testRecord(1, 7, []byte("hello"))
	two := append(append([]byte(nil), one...), testRecord(2, 8, []byte("world"))...)
	for _, seed := range [][]byte{nil, one, two, two[:len(two)-3], two[:len(one)+5], make([]byte, 40), append(two, 0, 0, 0)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, log []byte) {
		records, bad := readWAL(log, 1)
		n := 0
		for _, r := range records {
			if err := checkPayload(r); err != nil {
				t.Fatalf("a record returned does not decode: %v", err)
			}
			n += walHeader + len(r)
		}
		switch {
		case bad == nil && !allZero(log[n:]):
			t.Fatalf("%d of %d bytes read and nothing said about the rest", n, len(log))
		case bad != nil && bad.offset != int64(n):
			t.Fatalf("damage named at %d, the whole records end at %d", bad.offset, n)
		case bad != nil && bad.what == "":
			t.Fatal("damage without a description")
		}
	})
}

// FuzzLogDamage: a log of whole records with one bit flipped is never
// taken for a torn end, so nothing acknowledged is dropped without a word,
// but when the bit is in the last record's checksum or changes (which
// cannot be told from a write cut short: that record alone is dropped).
func FuzzLogDamage(f *testing.F) {
	f.Add([]byte("hello"), []byte("world"), []byte("again"), uint16(3), uint8(6))
	f.Add([]byte(""), []byte("x"), []byte("a longer text of a message"), uint16(0), uint8(7))
	f.Add([]byte("a"), []byte("b"), []byte("c"), uint16(40), uint8(0))
	f.Fuzz(func(t *testing.T, a, b, c []byte, at uint16, bit uint8) {
		var log []byte
		var starts []int
		for i, text := range [][]byte{a, b, c} {
			starts = append(starts, len(log))
			log = append(log, testRecord(uint64(i+1), uint64(i+1), text)...)
		}
		pos := int(at) % len(log)
		log[pos] ^= 1 << (bit % 8)
		rec := 0 // the record holding pos
		for i, s := range starts {
			if pos >= s {
				rec = i
			}
		}
		inBody := pos-starts[rec] >= sumAt
		records, bad := readWAL(log, 1)
		if bad == nil {
			t.Fatalf("bit %d of byte %d flipped: read as whole (%d records)", bit%8, pos, len(records))
		}
		if bad.torn && (!inBody || rec < len(starts)-1) {
			t.Fatalf("bit %d of byte %d flipped (record %d of %d, in its checksum or changes: %v): taken for a torn end at %d (%s)", bit%8, pos, rec+1, len(starts), inBody, bad.offset, bad.what)
		}
		if len(records) > rec {
			t.Fatalf("bit %d of byte %d flipped: %d records read, the damaged one is record %d", bit%8, pos, len(records), rec+1)
		}
	})
}
