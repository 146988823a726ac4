package store

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// FuzzLogRecovery: the log as a crash or a damaged disk may leave it.
// Reading it never panics; the records it returns are whole and decode;
// and whatever follows them is named (torn: only at the end).
func FuzzLogRecovery(f *testing.F) {
	var tx Tx
	tx.buf = make([]byte, walHeader)
	tx.path(walPut, pathLog, idKey(7))
	tx.buf = binary.AppendUvarint(tx.buf, 5)
	tx.buf = append(tx.buf, "hello"...)
	tx.path(walDeleteBucket, [][]byte{bucketMailbox}, []byte("bob"))
	rec := tx.buf
	payload := rec[walHeader:]
	binary.LittleEndian.PutUint32(rec, uint32(len(payload)))
	binary.LittleEndian.PutUint32(rec[4:], crc32.Checksum(payload, castagnoli))
	two := append(append([]byte(nil), rec...), rec...)
	for _, seed := range [][]byte{nil, rec, two, two[:len(two)-3], two[:len(rec)+5], make([]byte, 40), append(two, 0, 0, 0)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, log []byte) {
		records, bad := readWAL(log)
		n := 0
		for _, r := range records {
			if err := checkPayload(r); err != nil {
				t.Fatalf("a record returned does not decode: %v", err)
			}
			n += walHeader + len(r)
		}
		switch {
		case bad == nil && n != len(log):
			t.Fatalf("%d of %d bytes read and nothing said about the rest", n, len(log))
		case bad != nil && bad.offset != int64(n):
			t.Fatalf("damage named at %d, the whole records end at %d", bad.offset, n)
		case bad != nil && bad.what == "":
			t.Fatal("damage without a description")
		}
	})
}
