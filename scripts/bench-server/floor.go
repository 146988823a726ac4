//go:build linux

package main

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// The floor is the fan-out mode's third server: the least any server does for a broadcast it
// writes everywhere before the next (a server that writes overlapping broadcasts together, as
// the chat's writer loops do when behind, makes fewer writes): the same frame written to every
// receiver's connection, one raw write(2) each (as the chat's writer loops make them, outside
// Go's syscall bookkeeping), from one goroutine, so that the chat's and Centrifugo's CPU and
// p99 per broadcast read as multiples of what the writes alone cost on this machine. It speaks
// just enough of the chat's protocol for `wasmgap load`'s fan-out receivers: GET /<nick> (SSE)
// and GET /ws (WebSocket) answer the stream's head and one event, which welcomes the receiver;
// POST /send writes its body, unread, as one SSE event to every SSE stream and one text frame
// to every WebSocket, and answers once every write is done. Nothing is stored, nothing read
// from a stream once open, no id given. It runs as this program, started again with floorEnv
// set to its address.

// floorEnv, set to an address, makes this program the floor server on it.
const floorEnv = "BENCH_SERVER_FLOOR"

// serveFloorIfAsked serves the floor and exits when floorEnv is set.
func serveFloorIfAsked() {
	if addr := os.Getenv(floorEnv); addr != "" {
		srv := &http.Server{Addr: addr, Handler: &floor{}, ReadHeaderTimeout: 10 * time.Second}
		os.Stderr.WriteString(srv.ListenAndServe().Error() + "\n")
		os.Exit(1)
	}
}

// floor holds the open streams of each transport.
type floor struct {
	mu      sync.Mutex
	sse, ws []floorStream
}

// floorStream is an open stream's connection and its descriptor's RawConn, looked up once.
type floorStream struct {
	c  net.Conn
	rc syscall.RawConn
}

func (f *floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/health":
	case r.Method == http.MethodPost && r.URL.Path == "/send":
		body, err := io.ReadAll(io.LimitReader(r.Body, 4<<10))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = bytes.TrimSpace(body)
		sse := append(append([]byte("data: "), body...), "\n\n"...)
		ws := wsServerFrame(body)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.sse, f.ws = writeAll(f.sse, sse), writeAll(f.ws, ws)
	case r.URL.Path == "/ws":
		sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		head := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
			base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n"
		f.open(w, &f.ws, append([]byte(head), wsServerFrame([]byte("welcome"))...))
	default:
		f.open(w, &f.sse, []byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\ndata: welcome\n\n"))
	}
}

// open takes the request's connection from net/http, writes first on it and adds it to the
// streams.
func (f *floor) open(w http.ResponseWriter, streams *[]floorStream, first []byte) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if _, err := conn.Write(first); err != nil {
		conn.Close()
		return
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		conn.Close()
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		conn.Close()
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	*streams = append(*streams, floorStream{conn, rc})
}

// writeAll writes frame to each connection and returns those it could write to. Each write
// is a raw write(2), outside Go's syscall bookkeeping, as the chat's writer loops make them;
// what a socket does not take at once goes through its net.Conn, which waits.
func writeAll(streams []floorStream, frame []byte) []floorStream {
	live := streams[:0]
	for _, s := range streams {
		n := 0
		s.rc.Control(func(fd uintptr) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&frame[0])), uintptr(len(frame)))
			if e == 0 {
				n = int(r)
			}
		})
		if n < len(frame) {
			if _, err := s.c.Write(frame[n:]); err != nil {
				s.c.Close()
				continue
			}
		}
		live = append(live, s)
	}
	return live
}

// wsServerFrame is a final, unmasked text frame of payload (RFC 6455 §5.2), shorter than 64 KiB.
func wsServerFrame(payload []byte) []byte {
	n := len(payload)
	if n < 126 {
		return append([]byte{0x81, byte(n)}, payload...)
	}
	return append([]byte{0x81, 126, byte(n >> 8), byte(n)}, payload...)
}
