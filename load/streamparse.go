package load

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/gorilla/websocket"
)

// The stream parsers read an event stream from bytes as they arrive, in pieces of any size:
// a blocking reader feeds them what each Read returns, the fan-out event loop what each
// non-blocking read returns. Between pieces they keep a small state; a line or frame split
// across pieces is copied into a buffer lent by a pool, returned once it is complete.

// pieceBuffers lends the parsers a buffer for a line or frame that spans reads.
var pieceBuffers = sync.Pool{New: func() any { return new([maxFrame]byte) }}

// A streamParser reads one stream's bytes as they arrive: sseParser or wsParser.
type streamParser interface {
	// feed parses data, calling onEvent for each event and reply to answer the server.
	feed(s *subscriber, data []byte, onEvent func(event), reply func(opcode byte, payload []byte) error) error
	// release returns the buffer it holds; end is the error of a stream the server closed.
	release()
	end() error
}

// sseParser reads a Server-Sent Events body.
type sseParser struct {
	line     *[maxFrame]byte // the line so far, when it spans pieces (lent)
	lineLen  int
	skipping bool // in a line longer than streamBufferSize: not one of the run's messages
	ev       event
	hasData  bool
	hasID    bool
}

// feed parses data, calling onEvent for each complete event; an SSE client answers nothing.
func (p *sseParser) feed(s *subscriber, data []byte, onEvent func(event), _ func(byte, []byte) error) error {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			p.hold(data)
			return nil
		}
		piece := data[:i+1]
		data = data[i+1:]
		switch {
		case p.skipping:
			p.skipping, p.hasData = false, true // the end of the long line: it was data
			continue
		case p.line != nil:
			p.hold(piece)
			if p.skipping {
				p.skipping, p.hasData = false, true
				continue
			}
			p.handleLine(s, bytes.TrimRight(p.line[:p.lineLen], "\r\n"), onEvent)
			p.release() // after the line is read: the buffer goes to other parsers
			continue
		case len(piece) > streamBufferSize:
			p.hasData = true // skipped as when it spans reads: never one of the run's messages
			continue
		}
		p.handleLine(s, bytes.TrimRight(piece, "\r\n"), onEvent)
	}
	return nil
}

// end: the server ended the stream.
func (p *sseParser) end() error { return errStreamEnded }

// hold keeps the start of a line that continues in the next piece.
func (p *sseParser) hold(b []byte) {
	if p.skipping {
		return
	}
	if p.lineLen+len(b) > streamBufferSize {
		p.release()
		p.skipping = true
		return
	}
	if p.line == nil {
		p.line = pieceBuffers.Get().(*[maxFrame]byte)
	}
	p.lineLen += copy(p.line[p.lineLen:], b)
}

// release returns the line's buffer. What the caller still reads from it must be read first.
func (p *sseParser) release() {
	if p.line != nil {
		pieceBuffers.Put(p.line)
		p.line, p.lineLen = nil, 0
	}
}

func (p *sseParser) handleLine(s *subscriber, line []byte, onEvent func(event)) {
	switch {
	case len(line) == 0:
		if p.hasData {
			if p.hasID {
				s.lastID = p.ev.id
			}
			onEvent(p.ev)
		}
		p.ev, p.hasData, p.hasID = event{}, false, false
	case line[0] == ':':
		// a comment: ping, or the server's reason for closing
	default:
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "id":
			if n, ok := parseUint(value); ok {
				p.ev.id, p.hasID = n, true
			}
		case "data":
			if p.hasData && p.ev.text != "" {
				p.ev.text += "\n" + string(value)
			} else if bytes.Contains(value, s.t.token) {
				p.ev.text = string(value)
			}
			p.hasData = true
		}
	}
}

// wsParser reads the frames a WebSocket server sends (unmasked), as RFC 6455 has them.
type wsParser struct {
	head    [14]byte // a frame's head so far, when it spans pieces
	headLen int
	// The frame being read, once its head is: opcode, payload length and bytes read.
	inFrame      bool
	opcode       byte
	fin          bool
	length, read uint64
	// The data message being read (its frames and continuations): a lent buffer when it
	// spans pieces or frames, its length, and whether it outgrew maxFrame.
	msg     *[maxFrame]byte
	msgLen  int
	tooLong bool
	inMsg   bool
	// ctl is a control frame's payload when it spans pieces.
	ctl    [125]byte
	ctlLen int
}

// WebSocket opcodes.
const (
	wsContinuation = 0x0
	wsText         = 0x1
	wsBinary       = 0x2
	wsClose        = 0x8
	wsPing         = 0x9
	wsPong         = 0xA
)

// errWSProtocol marks a frame that breaks RFC 6455.
var errWSProtocol = errors.New("websocket: protocol error")

// feed parses data, calling onEvent for each chat event and reply to answer pings (with a
// pong) and the close. It returns the close as a *websocket.CloseError, as gorilla's reader
// does, and any protocol error.
func (p *wsParser) feed(s *subscriber, data []byte, onEvent func(event), reply func(opcode byte, payload []byte) error) error {
	for len(data) > 0 {
		if !p.inFrame {
			var ok bool
			var err error
			if data, ok, err = p.readHead(data); err != nil || !ok {
				return err
			}
		}
		n := min(uint64(len(data)), p.length-p.read)
		chunk := data[:n]
		data = data[n:]
		p.read += n
		whole := p.read == p.length
		if p.opcode >= wsClose {
			if !whole || p.ctlLen > 0 {
				p.ctlLen += copy(p.ctl[p.ctlLen:], chunk)
				if !whole {
					continue
				}
				chunk = p.ctl[:p.ctlLen]
			}
			p.inFrame, p.ctlLen = false, 0
			if err := p.control(chunk, reply); err != nil {
				return err
			}
			continue
		}
		// A data frame: in place when the message is this one piece, else gathered.
		if whole && p.fin && p.msg == nil && !p.tooLong && p.read == uint64(len(chunk)) && len(chunk) <= maxFrame {
			p.inFrame, p.inMsg = false, false
			if err := s.t.proto.frame(s, chunk, false, onEvent, reply); err != nil {
				return err
			}
			continue
		}
		if !p.tooLong {
			if p.msgLen+len(chunk) > maxFrame {
				p.tooLong = true
				p.release()
			} else {
				if p.msg == nil {
					p.msg = pieceBuffers.Get().(*[maxFrame]byte)
				}
				p.msgLen += copy(p.msg[p.msgLen:], chunk)
			}
		}
		if !whole {
			continue
		}
		p.inFrame = false
		if !p.fin {
			continue
		}
		var b []byte
		if p.msg != nil {
			b = p.msg[:p.msgLen]
		}
		err := s.t.proto.frame(s, b, p.tooLong, onEvent, reply)
		p.release()
		p.tooLong, p.inMsg = false, false
		if err != nil {
			return err
		}
	}
	return nil
}

// end: the server closed the connection without a close frame.
func (p *wsParser) end() error { return errWSEOF }

func (p *wsParser) release() {
	if p.msg != nil {
		pieceBuffers.Put(p.msg)
		p.msg, p.msgLen = nil, 0
	}
}

// readHead reads a frame's head from data, or keeps what there is of it; ok says the head is
// complete and the frame started.
func (p *wsParser) readHead(data []byte) (rest []byte, ok bool, err error) {
	var h []byte
	if need := 0; p.headLen == 0 && len(data) >= 2 {
		need = wsHeadLen(data[1])
		if len(data) >= need {
			h, data = data[:need], data[need:]
		}
	}
	if h == nil {
		for p.headLen < 2 && len(data) > 0 {
			p.head[p.headLen] = data[0]
			p.headLen++
			data = data[1:]
		}
		if p.headLen < 2 {
			return nil, false, nil
		}
		need := wsHeadLen(p.head[1])
		n := copy(p.head[p.headLen:need], data)
		p.headLen += n
		data = data[n:]
		if p.headLen < need {
			return nil, false, nil
		}
		h, p.headLen = p.head[:need], 0
	}
	b0, b1 := h[0], h[1]
	if b0&0x70 != 0 {
		return nil, false, fmt.Errorf("%w: reserved bits set (0x%02x)", errWSProtocol, b0)
	}
	if b1&0x80 != 0 {
		return nil, false, fmt.Errorf("%w: masked frame from the server", errWSProtocol)
	}
	p.opcode, p.fin = b0&0x0f, b0&0x80 != 0
	switch n := b1 & 0x7f; n {
	case 126:
		p.length = uint64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		p.length = binary.BigEndian.Uint64(h[2:10])
		if p.length>>63 != 0 {
			return nil, false, fmt.Errorf("%w: frame length with the top bit set", errWSProtocol)
		}
	default:
		p.length = uint64(n)
	}
	switch p.opcode {
	case wsClose, wsPing, wsPong:
		if p.length > 125 || !p.fin {
			return nil, false, fmt.Errorf("%w: control frame of %d bytes, final %v", errWSProtocol, p.length, p.fin)
		}
	case wsText, wsBinary:
		if p.inMsg {
			return nil, false, fmt.Errorf("%w: a new message before the last one ended", errWSProtocol)
		}
		p.inMsg = true
	case wsContinuation:
		if !p.inMsg {
			return nil, false, fmt.Errorf("%w: continuation frame outside a message", errWSProtocol)
		}
	default:
		return nil, false, fmt.Errorf("%w: unknown opcode %d", errWSProtocol, p.opcode)
	}
	p.inFrame, p.read = true, 0
	return data, true, nil
}

// wsHeadLen is the length of a server frame's head, from its second byte.
func wsHeadLen(b1 byte) int {
	switch b1 & 0x7f {
	case 126:
		return 4
	case 127:
		return 10
	}
	return 2
}

// control handles a complete control frame: a ping is answered, a close ends the stream.
func (p *wsParser) control(payload []byte, reply func(opcode byte, payload []byte) error) error {
	switch p.opcode {
	case wsPing:
		return reply(wsPong, payload)
	case wsClose:
		code, text := websocket.CloseNoStatusReceived, ""
		if len(payload) >= 2 {
			code, text = int(binary.BigEndian.Uint16(payload)), string(payload[2:])
		}
		reply(wsClose, payload[:min(len(payload), 2)]) // best effort: the stream ends anyway
		return &websocket.CloseError{Code: code, Text: text}
	}
	return nil
}
