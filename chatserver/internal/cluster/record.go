package cluster

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/room"
)

// Record is one change of the chat's state, as appended to the stream:
// one request of internal/room's machine, less the sequence and the time,
// which the stream gives it.
type Record struct {
	Kind   string `json:"k"`            // post, open, close, grace, ack, gone, flush
	Node   string `json:"n"`            // the appending node's incarnation
	Token  uint64 `json:"q,omitempty"`  // the appender's number for it (opens: the stream's id)
	Nick   string `json:"u,omitempty"`  // the user (post: the sender)
	To     string `json:"to,omitempty"` // post: receiver or "all"
	Text   string `json:"t,omitempty"`
	Time   int64  `json:"tm,omitempty"` // post: when it was sent
	Resume uint64 `json:"r,omitempty"`  // open: resume id; ack: from; grace: generation
	Has    bool   `json:"h,omitempty"`  // open: has a resume id
	Upto   uint64 `json:"up,omitempty"` // ack: to
	Gone   string `json:"g,omitempty"`  // gone: the node declared gone
	Addr   string `json:"a,omitempty"`  // post: the sender's address
}

func (r *Record) encode() []byte {
	b, _ := json.Marshal(r) // strings and numbers only: cannot fail
	return b
}

// Decode reads a record as Append stored it.
func Decode(data []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Request is r, stored at seq at time at, as the machine's request.
func (r *Record) Request(seq uint64, at time.Time) (room.Request, error) {
	q := room.Request{Seq: seq, At: at, Nick: r.Nick}
	switch r.Kind {
	case "post":
		q.Kind, q.To, q.Text, q.Addr, q.Sent = room.Post, r.To, r.Text, r.Addr, time.Unix(0, r.Time)
	case "open":
		q.Kind, q.Node, q.Token, q.Resume, q.HasResume = room.Open, r.Node, r.Token, r.Resume, r.Has
	case "close":
		q.Kind, q.Node, q.Token = room.Close, r.Node, r.Resume
	case "grace":
		q.Kind, q.Gen = room.GraceOver, r.Resume
	case "ack":
		q.Kind, q.From, q.Upto = room.Ack, r.Resume, r.Upto
	case "gone":
		q.Kind, q.Node = room.NodeGone, r.Gone
	case "flush":
		q.Kind = room.Flush
	default:
		return q, fmt.Errorf("chat NATS: unknown message kind %q", r.Kind)
	}
	return q, nil
}
