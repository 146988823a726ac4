package load

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// errProtocol marks an answer that is not valid HTTP/1.x.
var errProtocol = errors.New("malformed HTTP response")

// errUnexpectedClose is a connection that ended before its answer did.
var errUnexpectedClose = errors.New("connection closed before the answer ended")

// respParser reads one HTTP/1.x answer from bytes as they arrive. Every client that speaks
// HTTP/1.x itself uses it: the raw client feeds it what each Read returns, the event-loop
// client what each non-blocking read returns (it cannot block on a bufio.Reader). It keeps
// only what it needs (status, Content-Length, Transfer-Encoding, Connection); bodies are
// counted and dropped. Once its buffers have grown, it allocates nothing.
type respParser struct {
	head bool // the request was HEAD: no body

	st        int
	hdr       []byte // the head so far, when it spans reads
	line      []byte // a chunk-size or trailer line so far, when it spans reads
	remaining int64

	status int  // the answer's status code, once its head is read
	keep   bool // the connection may carry another request after this answer
}

const (
	stHeader = iota
	stBody
	stChunkSize
	stChunkData
	stTrailer
	stUntilClose
	stDone
)

// Bounds on what the parser buffers.
const (
	maxHeadBytes      = 1 << 20  // an answer's status line and headers
	maxChunkLineBytes = 64 << 10 // a chunk-size or trailer line
)

func (p *respParser) reset() {
	p.st, p.hdr, p.line, p.remaining, p.status, p.keep = stHeader, p.hdr[:0], p.line[:0], 0, 0, false
}

// feed consumes data and says how many of its bytes belong to the answer and whether the answer
// is complete. Bytes after a complete answer were never asked for (the clients do not
// pipeline): the connection is out of step, so it is not kept.
func (p *respParser) feed(data []byte) (used int, done bool, err error) {
	total := len(data)
	for len(data) > 0 || p.st == stDone {
		switch p.st {
		case stDone:
			if len(data) > 0 {
				p.keep = false
			}
			return total - len(data), true, nil
		case stHeader:
			var head []byte
			if len(p.hdr) == 0 {
				// The common case: the whole head in one read, parsed where it lies.
				if i := bytes.Index(data, []byte("\r\n\r\n")); i >= 0 {
					head, data = data[:i+4], data[i+4:]
				}
			}
			if head == nil {
				from := max(len(p.hdr)-3, 0)
				p.hdr = append(p.hdr, data...)
				i := bytes.Index(p.hdr[from:], []byte("\r\n\r\n"))
				if i < 0 {
					if len(p.hdr) > maxHeadBytes {
						return total, false, fmt.Errorf("%w: headers longer than 1 MiB", errProtocol)
					}
					return total, false, nil
				}
				end := from + i + 4
				// The bytes after the head are the tail of data: go on with them there, and
				// leave p.hdr alone until the next answer's head.
				head, data = p.hdr[:end], data[len(data)-(len(p.hdr)-end):]
			}
			cl, chunked, err := p.parseHead(head)
			if err != nil {
				return total - len(data), false, err
			}
			p.hdr = p.hdr[:0]
			switch {
			case p.status < 200:
				continue // an interim answer (100 Continue): the real one follows
			case p.head || p.status == 204 || p.status == 304:
				p.st = stDone
			case chunked:
				p.st = stChunkSize
			case cl == 0:
				p.st = stDone
			case cl > 0:
				p.st, p.remaining = stBody, cl
			default:
				p.st, p.keep = stUntilClose, false
			}
		case stBody, stChunkData:
			n := min(int64(len(data)), p.remaining)
			p.remaining -= n
			data = data[n:]
			if p.remaining == 0 {
				if p.st == stBody {
					p.st = stDone
				} else {
					p.st = stChunkSize
				}
			}
		case stChunkSize, stTrailer:
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				p.line = append(p.line, data...)
				if len(p.line) > maxChunkLineBytes {
					return total, false, fmt.Errorf("%w: chunk line longer than 64 KiB", errProtocol)
				}
				return total, false, nil
			}
			line := data[:i]
			if len(p.line) > 0 {
				p.line = append(p.line, line...)
				line = p.line
			}
			data = data[i+1:]
			p.line = p.line[:0]
			line = bytes.TrimRight(line, "\r")
			if p.st == stTrailer {
				if len(line) == 0 {
					p.st = stDone
				}
				continue
			}
			if len(line) == 0 {
				continue // the CRLF after a chunk's data
			}
			if j := bytes.IndexByte(line, ';'); j >= 0 {
				line = line[:j]
			}
			size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
			if err != nil || size < 0 {
				return total - len(data), false, fmt.Errorf("%w: chunk size %q", errProtocol, truncate(line))
			}
			if size == 0 {
				p.st = stTrailer
			} else {
				p.st, p.remaining = stChunkData, size
			}
		case stUntilClose:
			data = nil
		}
	}
	return total, p.st == stDone, nil
}

// eof tells the parser the connection ended; an answer that runs to the close is complete.
func (p *respParser) eof() (done bool) {
	if p.st == stUntilClose {
		p.st = stDone
		return true
	}
	return p.st == stDone
}

// parseHead reads the status line and the headers the clients need from one head, CRLF CRLF
// included.
func (p *respParser) parseHead(b []byte) (contentLength int64, chunked bool, err error) {
	line, rest, _ := bytes.Cut(b, []byte("\r\n"))
	// "HTTP/1.1 200 OK": the version, a space, three digits, then a space or nothing.
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' ||
		(len(line) > 12 && line[12] != ' ') || !isDigits(line[9:12]) {
		return 0, false, fmt.Errorf("%w: status line %q", errProtocol, truncate(line))
	}
	p.keep = line[7] == '1'
	p.status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
	if p.status < 100 {
		return 0, false, fmt.Errorf("%w: status line %q", errProtocol, truncate(line))
	}
	contentLength = -1
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return 0, false, fmt.Errorf("%w: header line %q", errProtocol, truncate(line))
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case asciiEqualFold(name, "content-length"):
			if !isDigits(value) || len(value) > 18 {
				return 0, false, fmt.Errorf("%w: Content-Length %q", errProtocol, truncate(value))
			}
			v, _ := strconv.ParseInt(string(value), 10, 64)
			contentLength = v
		case asciiEqualFold(name, "transfer-encoding"):
			chunked = containsFold(value, "chunked")
		case asciiEqualFold(name, "connection"):
			if containsFold(value, "close") {
				p.keep = false
			} else if containsFold(value, "keep-alive") {
				p.keep = true
			}
		}
	}
	return contentLength, chunked, nil
}

// isDigits says whether b is one or more ASCII digits.
func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func asciiEqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// containsFold says whether b contains the lower-case ASCII word, ignoring case.
func containsFold(b []byte, lower string) bool {
	for i := 0; i+len(lower) <= len(b); i++ {
		if asciiEqualFold(b[i:i+len(lower)], lower) {
			return true
		}
	}
	return false
}

func truncate(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}
