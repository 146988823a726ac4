package stream

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
	"strings"
)

// Event is one line a user receives, encoded once for every transport.
type Event struct {
	ID   uint64
	Text string
	SSE  []byte // "id: <n>\ndata: <text>\n\n"
	WS   []byte // {"id":<n>,"text":"<text>"} as a server's WebSocket text frame, its header included
}

// SendBuffer is a stream socket's kernel send buffer (SO_SNDBUF) for
// messages of at most maxMessageBytes: room for the largest event (a
// WebSocket frame of a text whose every byte JSON escapes to six), at
// least 32 KiB, so that a broadcast always fits, instead of the megabytes
// the kernel's autotuning would let a client that reads nothing pin; what
// waits beyond it waits in the stream's bounded queue.
func SendBuffer(maxMessageBytes int) int { return max(32<<10, 6*maxMessageBytes+1024) }

// NewEvent encodes the event id with text for both transports.
func NewEvent(id uint64, text string) *Event {
	var digits [20]byte
	num := strconv.AppendUint(digits[:0], id, 10)
	sse := make([]byte, 0, len(text)+len(num)+16)
	sse = append(append(append(sse, "id: "...), num...), '\n')
	for line := range strings.SplitSeq(text, "\n") {
		sse = append(append(append(sse, "data: "...), line...), '\n')
	}
	quoted, _ := json.Marshal(text) // a string always marshals
	const head, mid = `{"id":`, `,"text":`
	n := len(head) + len(num) + len(mid) + len(quoted) + 1
	ws := appendTextHeader(make([]byte, 0, 10+n), n)
	ws = append(append(append(append(append(ws, head...), num...), mid...), quoted...), '}')
	return &Event{ID: id, Text: text, SSE: append(sse, '\n'), WS: ws}
}

// AppendTextFrame appends payload as one unmasked WebSocket text frame
// (RFC 6455 5.2: a server's frames are never masked).
func AppendTextFrame(b, payload []byte) []byte {
	return append(appendTextHeader(b, len(payload)), payload...)
}

// appendTextHeader appends the header of an unmasked text frame of n bytes.
func appendTextHeader(b []byte, n int) []byte {
	const finText = 0x81
	switch {
	case n < 126:
		return append(b, finText, byte(n))
	case n < 1<<16:
		return append(b, finText, 126, byte(n>>8), byte(n))
	}
	return binary.BigEndian.AppendUint64(append(b, finText, 127), uint64(n))
}
