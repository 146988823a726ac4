package quota

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

// Bytes bounds the bytes each client address's streams hold queued: in the
// server (events waiting for their writer) and in the kernel (each
// stream's send buffer, reserved while it is open).
type Bytes struct {
	max int64
	mu  sync.Mutex
	m   map[string]*AddrBytes
}

// NewBytes lets each address hold max bytes; a negative max: no limit.
func NewBytes(max int64) *Bytes {
	if max < 0 {
		max = math.MaxInt64
	}
	return &Bytes{max: max, m: map[string]*AddrBytes{}}
}

// AddrBytes is one address's count (a stream.Budget).
type AddrBytes struct {
	b     *Bytes
	addr  string
	n     atomic.Int64
	users int // under b.mu: the streams that hold it
}

// Open returns addr's count for one more stream, with reserve bytes of it
// taken (its kernel send buffer); false when they do not fit. Close gives
// the reserve back once the stream ended.
func (b *Bytes) Open(addr string, reserve int64) (*AddrBytes, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.m[addr]
	if a == nil {
		a = &AddrBytes{b: b, addr: addr}
		b.m[addr] = a
	}
	if !a.Take(reserve) {
		if a.users == 0 {
			delete(b.m, addr)
		}
		return nil, false
	}
	a.users++
	return a, true
}

// Close gives back a stream's reserve and forgets the address once no
// stream holds it.
func (a *AddrBytes) Close(reserve int64) {
	a.Give(reserve)
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	if a.users--; a.users == 0 {
		delete(a.b.m, a.addr)
	}
}

// Take counts n more bytes; false (nothing counted) past the most.
func (a *AddrBytes) Take(n int64) bool {
	if a.n.Add(n) > a.b.max {
		a.n.Add(-n)
		return false
	}
	return true
}

// Give counts n bytes less.
func (a *AddrBytes) Give(n int64) { a.n.Add(-n) }

// Held is the bytes counted now.
func (a *AddrBytes) Held() int64 { return a.n.Load() }

// Rule says the most, for a refusal or a cut.
func (a *AddrBytes) Rule() string {
	return fmt.Sprintf("%d bytes their clients have not read (in the server's queues and the kernel's buffers), the most one address may have", a.b.max)
}
