package load

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

const testToken = "lt-test-"

func testSubscriber() *subscriber {
	return &subscriber{t: &streamTarget{token: []byte(testToken), proto: chatProtocol{}}}
}

// splits feeds stream to feed whole, in two pieces split at every byte boundary, and a byte at
// a time; check gets each way's name.
func splits(stream []byte, feed func(way string, pieces [][]byte)) {
	feed("whole", [][]byte{stream})
	for i := 1; i < len(stream); i++ {
		feed(fmt.Sprintf("split at %d", i), [][]byte{stream[:i], stream[i:]})
	}
	bytewise := make([][]byte, len(stream))
	for i := range stream {
		bytewise[i] = stream[i : i+1]
	}
	feed("byte by byte", bytewise)
}

func TestSSEParserSplitAnywhere(t *testing.T) {
	long := strings.Repeat("x", 3*streamBufferSize)
	stream := []byte("data: Welcome lt-r0!\n\n" +
		": ping\n\n" +
		"id: 7\r\ndata: hello " + testToken + "1\r\n\r\n" +
		"data: now online: " + long + testToken + "9\nid: 8\n\n" + // too long: skipped, whole or split
		"id: 9\ndata: first " + testToken + "2\ndata: second\n\n" +
		"id: 10\ndata: someone joined\n\n" +
		"data: no end yet")
	want := []event{{id: 0}, {id: 7, text: "hello " + testToken + "1"}, {id: 8},
		{id: 9, text: "first " + testToken + "2\nsecond"}, {id: 10}}
	splits(stream, func(way string, pieces [][]byte) {
		s := testSubscriber()
		var p sseParser
		var got []event
		for _, b := range pieces {
			p.feed(s, b, func(ev event) { got = append(got, ev) }, nil)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: events\n%+v\nwant\n%+v", way, got, want)
		}
		if s.lastID != 10 {
			t.Fatalf("%s: lastID %d, want 10", way, s.lastID)
		}
		p.release()
	})
}

// serverFrame is a frame as a server sends it (unmasked).
func serverFrame(opcode byte, fin bool, payload []byte) []byte {
	b0 := opcode
	if fin {
		b0 |= 0x80
	}
	var f []byte
	switch n := len(payload); {
	case n < 126:
		f = []byte{b0, byte(n)}
	case n < 1<<16:
		f = []byte{b0, 126, 0, 0}
		binary.BigEndian.PutUint16(f[2:], uint16(n))
	default:
		f = make([]byte, 10)
		f[0], f[1] = b0, 127
		binary.BigEndian.PutUint64(f[2:], uint64(n))
	}
	return append(f, payload...)
}

func TestWSParserSplitAnywhere(t *testing.T) {
	msg := func(id int, text string) []byte {
		return []byte(fmt.Sprintf(`{"id":%d,"from":"s","to":"all","text":%q}`, id, text))
	}
	padded := fmt.Sprintf(`{"id":12,"text":"%s %s3"}`, strings.Repeat("p", 300), testToken)
	var stream []byte
	stream = append(stream, serverFrame(wsText, true, []byte(`{"text":"Welcome lt-r0!"}`))...)
	stream = append(stream, serverFrame(wsText, true, msg(11, testToken+"1"))...)
	stream = append(stream, serverFrame(wsPing, true, []byte("ack 1 11"))...)
	stream = append(stream, serverFrame(wsText, true, []byte(padded))...)                                                                             // 16-bit length
	stream = append(stream, serverFrame(wsText, true, []byte(fmt.Sprintf(`{"id":99,"text":"%s %s6"}`, strings.Repeat("q", maxFrame), testToken)))...) // too long
	m14 := msg(14, testToken+"5")
	stream = append(stream, 0x81, 127, 0, 0, 0, 0, 0, 0, 0, byte(len(m14))) // a 64-bit length
	stream = append(stream, m14...)
	stream = append(stream, serverFrame(wsText, false, []byte(`{"id":13,"te`))...)             // fragmented,
	stream = append(stream, serverFrame(wsPing, true, nil)...)                                 // a ping between fragments,
	stream = append(stream, serverFrame(wsContinuation, true, msg(13, testToken+"4")[12:])...) // the rest
	stream = append(stream, serverFrame(wsText, true, []byte(`{"error":"slow down"}`))...)
	stream = append(stream, serverFrame(wsClose, true, append([]byte{0x03, 0xe9}, "going away"...))...)
	want := []event{{id: 0}, {id: 11, text: testToken + "1"}, {id: 12, text: strings.Repeat("p", 300) + " " + testToken + "3"},
		{id: 12}, {id: 14, text: testToken + "5"}, {id: 13, text: testToken + "4"}}
	wantReplies := []string{"10:ack 1 11", "10:", "8:\x03\xe9"}
	splits(stream, func(way string, pieces [][]byte) {
		s := testSubscriber()
		var p wsParser
		var got []event
		var replies []string
		var err error
		for _, b := range pieces {
			if err = p.feed(s, b, func(ev event) { got = append(got, ev) }, func(op byte, payload []byte) error {
				replies = append(replies, fmt.Sprintf("%d:%s", op, payload))
				return nil
			}); err != nil {
				break
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: events\n%+v\nwant\n%+v", way, got, want)
		}
		if !reflect.DeepEqual(replies, wantReplies) {
			t.Fatalf("%s: replies %q, want %q", way, replies, wantReplies)
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != 1001 || ce.Text != "going away" {
			t.Fatalf("%s: error %v, want the close 1001 going away", way, err)
		}
		p.release()
	})
}

func TestWSParserRejectsBadFrames(t *testing.T) {
	for name, f := range map[string][]byte{
		"masked":               {0x81, 0x81, 0, 0, 0, 0, 'x'},
		"reserved bits":        {0xc1, 0x00},
		"unknown opcode":       {0x83, 0x00},
		"long control frame":   serverFrame(wsPing, true, make([]byte, 126)),
		"fragmented control":   serverFrame(wsPing, false, nil),
		"stray continuation":   serverFrame(wsContinuation, true, []byte("x")),
		"message inside other": append(serverFrame(wsText, false, []byte("a")), serverFrame(wsText, true, []byte("b"))...),
	} {
		var p wsParser
		err := p.feed(testSubscriber(), f, func(event) {}, func(byte, []byte) error { return nil })
		if !errors.Is(err, errWSProtocol) {
			t.Errorf("%s: error %v, want a protocol error", name, err)
		}
	}
}
