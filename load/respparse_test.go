package load

import (
	"errors"
	"testing"
)

// parseAll feeds answer to a fresh parser in pieces of the given size (0: all at once) and
// then, if the answer is not complete, the end of the connection.
func parseAll(answer []byte, head bool, piece int) (p respParser, used int, done bool, err error) {
	p.reset()
	p.head = head
	if piece <= 0 {
		piece = max(len(answer), 1)
	}
	for len(answer) > 0 {
		n := min(piece, len(answer))
		u, d, e := p.feed(answer[:n])
		used += u
		if e != nil {
			return p, used, false, e
		}
		if d {
			if u < n || n < len(answer) {
				// What the client would see: more bytes after the answer.
				p.feed(answer[u:])
			}
			return p, used, true, nil
		}
		answer = answer[n:]
	}
	return p, used, p.eof(), nil
}

func TestRespParser(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		head   bool
		status int
		used   int // -1: all of the answer
		keep   bool
		err    bool
		done   bool
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false, 200, -1, true, false, true},
		{"chunked with extension and trailer", "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3;x=y\r\nabc\r\n0\r\nT: v\r\n\r\n", false, 201, -1, true, false, true},
		{"no length runs to the close", "HTTP/1.0 200 OK\r\n\r\nbody until close", false, 200, -1, false, false, true},
		{"HTTP/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", false, 200, -1, true, false, true},
		{"connection close", "HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 2\r\n\r\nok", false, 200, -1, false, false, true},
		{"204 has no body", "HTTP/1.1 204 No Content\r\n\r\n", false, 204, -1, true, false, true},
		{"HEAD has no body", "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", true, 200, -1, true, false, true},
		{"100 Continue first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false, 200, -1, true, false, true},
		{"status line without reason", "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n", false, 404, -1, true, false, true},
		{"bytes after the answer: not kept", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", false, 200, 40, false, false, true},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", false, 200, -1, false, false, false},
		{"garbage", "SSH-2.0-OpenSSH\r\n\r\n", false, 0, 0, false, true, false},
		{"four-digit status", "HTTP/1.1 2000 OK\r\n\r\n", false, 0, 0, false, true, false},
		{"status below 100", "HTTP/1.1 099 Odd\r\n\r\n", false, 0, 0, false, true, false},
		{"signed length", "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello", false, 200, 0, false, true, false},
		{"huge length", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", false, 200, 0, false, true, false},
		{"header without colon", "HTTP/1.1 200 OK\r\nbroken\r\n\r\n", false, 200, 0, false, true, false},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false, 200, 0, false, true, false},
	}
	for _, tc := range tests {
		for _, piece := range []int{0, 1, 7} {
			p, used, done, err := parseAll([]byte(tc.answer), tc.head, piece)
			if (err != nil) != tc.err || !errors.Is(err, errProtocol) && err != nil {
				t.Errorf("%s (pieces of %d): error %v, want error %v", tc.name, piece, err, tc.err)
				continue
			}
			if tc.err {
				continue
			}
			want := tc.used
			if want < 0 {
				want = len(tc.answer)
			}
			if done != tc.done || p.status != tc.status || used != want || (done && p.keep != tc.keep) {
				t.Errorf("%s (pieces of %d): done %v status %d used %d keep %v, want %v %d %d %v",
					tc.name, piece, done, p.status, used, p.keep, tc.done, tc.status, want, tc.keep)
			}
		}
	}
}

// TestRespParserReuse: a parser reset after an answer reads the next one from scratch, with
// no state left from a head that spanned reads.
func TestRespParserReuse(t *testing.T) {
	var p respParser
	answers := []string{
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 500 Oops\r\nContent-Length: 3\r\n\r\nbad",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n",
		"HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n",
	}
	for round := range 3 {
		for i, a := range answers {
			p.reset()
			// Split the head across reads on odd rounds.
			split := len(a) / (round + 1)
			if _, done, err := p.feed([]byte(a[:split])); err != nil || (done && split < len(a)) {
				t.Fatalf("answer %d: first part: done %v err %v", i, done, err)
			}
			if split < len(a) {
				if _, done, err := p.feed([]byte(a[split:])); err != nil || !done {
					t.Fatalf("answer %d: second part: done %v err %v", i, done, err)
				}
			}
			if want := []int{500, 200, 302}[i]; p.status != want {
				t.Errorf("round %d answer %d: status %d, want %d", round, i, p.status, want)
			}
		}
	}
}

// TestRespParserNoAllocs: the clients' speed rests on the parser allocating nothing per
// answer once its buffers have grown.
func TestRespParserNoAllocs(t *testing.T) {
	answer := []byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
	var p respParser
	step := 9
	allocs := testing.AllocsPerRun(200, func() {
		p.reset()
		for i := 0; i < len(answer); i += step {
			p.feed(answer[i:min(i+step, len(answer))])
		}
	})
	if allocs != 0 || p.status != 200 {
		t.Errorf("%v allocations per answer (status %d), want 0", allocs, p.status)
	}
}

// FuzzRespParser feeds arbitrary bytes to the parser, at once and split in two at any point.
// It must never panic, never claim more bytes than it was given, and reach the same verdict
// however the bytes are split (under its buffer bounds, which a split can cross).
func FuzzRespParser(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3;x=y\r\nabc\r\n0\r\nT: v\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nbody until close",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
	} {
		f.Add([]byte(s), uint16(len(s)/2), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint16, head bool) {
		whole, used, done, err := parseAll(data, head, 0)
		if used < 0 || used > len(data) {
			t.Fatalf("used %d of %d bytes", used, len(data))
		}
		if err != nil && !errors.Is(err, errProtocol) {
			t.Fatalf("error %v is not a protocol error", err)
		}
		if done && (whole.status < 200 || whole.status > 999) {
			t.Fatalf("complete answer with status %d", whole.status)
		}
		if len(data) > maxChunkLineBytes {
			return
		}
		k := int(split) % (len(data) + 1)
		var p respParser
		p.reset()
		p.head = head
		u1, d1, e1 := p.feed(data[:k])
		u, d, e := u1, d1, e1
		if e1 == nil && !d1 {
			u2, d2, e2 := p.feed(data[k:])
			u, d, e = u1+u2, d2, e2
		}
		if e == nil && !d {
			d = p.eof()
		}
		if (e != nil) != (err != nil) || d != done || u != used || p.status != whole.status {
			t.Fatalf("split at %d: used %d done %v err %v status %d; whole: used %d done %v err %v status %d",
				k, u, d, e, p.status, used, done, err, whole.status)
		}
	})
}
