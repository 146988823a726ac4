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
	e := &Event{ID: id, Text: text}
	var b strings.Builder
	b.Grow(len(text) + 24)
	b.WriteString("id: ")
	b.WriteString(strconv.FormatUint(id, 10))
	b.WriteByte('\n')
	for line := range strings.SplitSeq(text, "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	e.SSE = []byte(b.String())
	js, _ := json.Marshal(struct {
		ID   uint64 `json:"id"`
		Text string `json:"text"`
	}{id, text})
	e.WS = AppendTextFrame(make([]byte, 0, len(js)+10), js)
	return e
}

// AppendTextFrame appends payload as one unmasked WebSocket text frame
// (RFC 6455 5.2: a server's frames are never masked).
func AppendTextFrame(b, payload []byte) []byte {
	const finText = 0x81
	switch n := len(payload); {
	case n < 126:
		b = append(b, finText, byte(n))
	case n < 1<<16:
		b = append(b, finText, 126, byte(n>>8), byte(n))
	default:
		b = append(b, finText, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	return append(b, payload...)
}
