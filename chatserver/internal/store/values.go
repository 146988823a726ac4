package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
)

// A stored value (a Record, a Mail) is valueFormat, CRC-32C of its JSON
// (4 bytes, little endian), then the JSON: bbolt checksums its meta pages
// but not the values, so a value altered on disk that still decodes (a
// byte of a message's text) is told by its checksum, and refused, never
// delivered altered. A value that begins with '{' was written before
// values had checksums: it decodes as it is, and leaves the store with the
// retention like every other.
const valueFormat = 0x01

// encodeValue is v as a stored value.
func encodeValue(v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 5, 5+len(j))
	b[0] = valueFormat
	binary.LittleEndian.PutUint32(b[1:], crc32.Checksum(j, castagnoli))
	return append(b, j...), nil
}

// errValueChecksum: a stored value whose checksum does not match.
var errValueChecksum = errors.New("its checksum does not match: it was altered on disk")

// decodeValue decodes the stored value b into v, checking its checksum.
func decodeValue(b []byte, v any) error {
	switch {
	case len(b) > 0 && b[0] == '{':
		// Written before values had checksums.
	case len(b) >= 5 && b[0] == valueFormat:
		j := b[5:]
		if crc32.Checksum(j, castagnoli) != binary.LittleEndian.Uint32(b[1:]) {
			return errValueChecksum
		}
		b = j
	default:
		return fmt.Errorf("not a stored value (%d bytes, format %#x)", len(b), firstByte(b))
	}
	return json.Unmarshal(b, v)
}

func firstByte(b []byte) byte {
	if len(b) == 0 {
		return 0
	}
	return b[0]
}
