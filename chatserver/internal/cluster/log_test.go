package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/room"
)

func TestRedactURLs(t *testing.T) {
	got := RedactURLs("nats://chat:s3cret@a:4222, nats://tok3n@b:4222,nats://c:4222")
	if strings.Contains(got, "s3cret") || strings.Contains(got, "tok3n") || !strings.Contains(got, "nats://c:4222") || !strings.Contains(got, "chat:xxxxx@a:4222") {
		t.Errorf("RedactURLs = %q, want passwords and tokens hidden, the rest kept", got)
	}
}

// TestRecordRoundTrip: every kind of record reads back as it was appended
// and becomes the machine's request of that kind; an unknown kind is refused.
func TestRecordRoundTrip(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	kinds := map[string]room.Kind{"post": room.Post, "open": room.Open, "close": room.Close, "grace": room.GraceOver, "ack": room.Ack, "gone": room.NodeGone, "flush": room.Flush}
	for _, r := range []Record{
		{Kind: "post", Node: "a", Token: 1, Nick: "mary", To: "john", Text: "hello", Time: at.UnixNano(), Addr: "127.0.0.1"},
		{Kind: "open", Node: "a", Token: 2, Nick: "john", Resume: 7, Has: true},
		{Kind: "close", Node: "a", Nick: "john", Resume: 2},
		{Kind: "grace", Nick: "john", Resume: 3},
		{Kind: "ack", Nick: "john", Resume: 4, Upto: 9},
		{Kind: "gone", Gone: "b"},
		{Kind: "flush"},
	} {
		back, err := Decode(r.encode())
		if err != nil || *back != r {
			t.Fatalf("%+v read back as %+v, %v", r, back, err)
		}
		q, err := back.Request(42, at)
		if err != nil || q.Kind != kinds[r.Kind] || q.Seq != 42 || !q.At.Equal(at) {
			t.Errorf("%s: request %+v, %v", r.Kind, q, err)
		}
	}
	if _, err := (&Record{Kind: "steal"}).Request(1, at); err == nil || !strings.Contains(err.Error(), `"steal"`) {
		t.Errorf("unknown kind: %v, want an error naming it", err)
	}
}
