package chatserver

import (
	"encoding/json"
	"strconv"
	"strings"
)

// event is one line a user receives, encoded once for every transport.
type event struct {
	id   uint64
	text string
	sse  []byte // "id: <n>\ndata: <text>\n\n"
	ws   []byte // {"id":<n>,"text":"<text>"}
}

func newEvent(id uint64, text string) *event {
	e := &event{id: id, text: text}
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
	e.sse = []byte(b.String())
	e.ws, _ = json.Marshal(struct {
		ID   uint64 `json:"id"`
		Text string `json:"text"`
	}{id, text})
	return e
}
