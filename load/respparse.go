package load

import (
	"bytes"
	"fmt"
	"strconv"
)

// respParser reads HTTP/1.x answers from bytes as they arrive, for the event-loop client,
// which cannot block on a bufio.Reader. It keeps only the header bytes; bodies are counted
// and dropped.
type respParser struct {
	head bool // the request was HEAD: no body

	st        int
	hdr       []byte
	line      []byte
	remaining int64

	status int
	keep   bool
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

func (p *respParser) reset() {
	p.st, p.hdr, p.line, p.remaining, p.status, p.keep = stHeader, p.hdr[:0], p.line[:0], 0, 0, false
}

// feed consumes data and says whether the answer is complete.
func (p *respParser) feed(data []byte) (done bool, err error) {
	for len(data) > 0 || p.st == stDone {
		switch p.st {
		case stDone:
			return true, nil
		case stHeader:
			from := max(len(p.hdr)-3, 0)
			p.hdr = append(p.hdr, data...)
			data = nil
			i := bytes.Index(p.hdr[from:], []byte("\r\n\r\n"))
			if i < 0 {
				if len(p.hdr) > 1<<20 {
					return false, fmt.Errorf("%w: headers longer than 1 MiB", errProtocol)
				}
				return false, nil
			}
			end := from + i + 4
			rest := p.hdr[end:]
			cl, chunked, err := p.parseHead(p.hdr[:end])
			if err != nil {
				return false, err
			}
			// rest aliases p.hdr's tail: p.hdr is not appended to again before the next answer
			// (an interim 1xx answer moves rest to the front with a memmove-safe append).
			data = rest
			switch {
			case p.status >= 100 && p.status < 200:
				p.hdr = p.hdr[:0]
				continue
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
				if len(p.line) > 64<<10 {
					return false, fmt.Errorf("%w: chunk line longer than 64 KiB", errProtocol)
				}
				return false, nil
			}
			p.line = append(p.line, data[:i]...)
			data = data[i+1:]
			line := bytes.TrimRight(p.line, "\r")
			if p.st == stTrailer {
				if len(line) == 0 {
					p.st = stDone
				}
				p.line = p.line[:0]
				continue
			}
			if len(line) == 0 {
				p.line = p.line[:0]
				continue // the CRLF after a chunk's data
			}
			if j := bytes.IndexByte(line, ';'); j >= 0 {
				line = line[:j]
			}
			size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
			if err != nil || size < 0 {
				return false, fmt.Errorf("%w: chunk size %q", errProtocol, truncate(line))
			}
			p.line = p.line[:0]
			if size == 0 {
				p.st = stTrailer
			} else {
				p.st, p.remaining = stChunkData, size
			}
		case stUntilClose:
			data = nil
		}
	}
	return p.st == stDone, nil
}

// eof tells the parser the connection ended; an answer that runs to the close is complete.
func (p *respParser) eof() (done bool) {
	if p.st == stUntilClose {
		p.st = stDone
		return true
	}
	return p.st == stDone
}

// parseHead reads the status line and the headers the client needs.
func (p *respParser) parseHead(b []byte) (contentLength int64, chunked bool, err error) {
	line, rest, _ := bytes.Cut(b, []byte("\r\n"))
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, false, fmt.Errorf("%w: status line %q", errProtocol, truncate(line))
	}
	p.keep = line[7] == '1'
	p.status, err = strconv.Atoi(string(line[9:12]))
	if err != nil || p.status < 100 {
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
			v, perr := strconv.ParseInt(string(value), 10, 64)
			if perr != nil || v < 0 {
				return 0, false, fmt.Errorf("%w: Content-Length %q", errProtocol, truncate(value))
			}
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
