package store

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// The first format of the log, read once to migrate a store that has no
// "walepoch" (wal.go): records of length (4 bytes), CRC-32C of the payload
// (4 bytes), payload; no header, no sequence.

// readWALv1 returns the payloads of the whole records of a log written
// before logs had a header (the first format: length, CRC-32C of the
// payload, payload), and what was
// wrong past them (nil: nothing).
func readWALv1(data []byte) ([][]byte, *walDamage) {
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
			if m, ok := wholeRecordWithinV1(rest[8:], sum); ok {
				return out, &walDamage{offset: int64(off), what: fmt.Sprintf("a damaged record length (%d bytes, past the end of the log %d bytes on, while the first %d bytes are a whole record, its checksum matching)", n, len(rest)-8, m)}
			}
			return out, &walDamage{torn: true, offset: int64(off), what: fmt.Sprintf("a record of %d bytes with %d left in the file", n, len(rest)-8)}
		}
		payload := rest[8 : 8+n]
		last := 8+n == len(rest)
		if crc32.Checksum(payload, castagnoli) != sum {
			if m, ok := wholeRecordWithinV1(payload, sum); last && ok {
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

// wholeRecordWithinV1 reports whether a prefix of b (m bytes) has the
// checksum sum and decodes: the payload of a record whose length is wrong.
// A record cut short has no such prefix but by a 1 in 2^32 chance, which
// decoding then refuses.
func wholeRecordWithinV1(b []byte, sum uint32) (m int, ok bool) {
	crc := uint32(0)
	for i := range b {
		crc = crc32.Update(crc, castagnoli, b[i:i+1])
		if crc == sum && checkPayload(b[:i+1]) == nil {
			return i + 1, true
		}
	}
	return 0, false
}
