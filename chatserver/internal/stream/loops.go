package stream

import (
	"sync"
)

// Loops are a few loops (one per two cores) that write streams' events from
// their own goroutines while the sockets take them at once. A broadcast to
// 10,000 streams is then 10,000 writes shared among the loops, not 10,000
// goroutines started and scheduled, one per stream (which cost about as
// much CPU as the writes themselves in a profile of sse-fanout).
//
// A loop never waits for a socket. A stream with anything else to write
// (its login, a note, a ping, a confirmation, its cut), or whose socket
// would not take all of its events, goes on to a goroutine of its own, as a
// stream without loops does: that goroutine writes the rest under the write
// deadline, so a stalled client holds up nobody, its own loop included.
//
// The loops share one queue of streams with something to write and take
// it a few streams at a time: a loop whose thread the kernel sets aside
// holds up those few, not a fixed share of every broadcast (which is what
// sank an earlier design with a share of the streams per writer). A
// stream is in the queue at most once (its writer state says it is being
// written), so its events stay in order whichever loop writes them.
type Loops struct {
	mu     sync.Mutex
	ready  []*Writer // under mu: streams to write, from head on
	head   int       // under mu
	closed bool      // under mu
	wakes  []chan struct{}
	wg     sync.WaitGroup
}

// writersTake is how many streams a loop takes from the queue at a time.
const writersTake = 32

// NewLoops starts n loops (at least one). Close stops them.
func NewLoops(n int) *Loops {
	w := &Loops{wakes: make([]chan struct{}, max(n, 1))}
	for i := range w.wakes {
		w.wakes[i] = make(chan struct{}, 1)
		w.wg.Add(1)
		go w.run(w.wakes[i])
	}
	return w
}

// Close stops the loops and waits for them. The streams still queued, and
// every stream woken later, are written by goroutines of their own.
func (w *Loops) Close() {
	w.mu.Lock()
	w.closed = true
	for _, wake := range w.wakes {
		close(wake) // under mu: hand sends on them under mu, never after this
	}
	w.mu.Unlock()
	w.wg.Wait()
	w.mu.Lock()
	rest := w.ready[w.head:]
	w.ready, w.head = nil, 0
	w.mu.Unlock()
	for _, l := range rest {
		startWriter(l)
	}
}

// hand queues l, whose writer state it holds (writerRunning); false when
// the loops are closed.
func (w *Loops) hand(l *Writer) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	first := w.head == len(w.ready)
	w.ready = append(w.ready, l)
	if first {
		for _, wake := range w.wakes {
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}
	return true
}

// take moves up to writersTake queued streams into batch.
func (w *Loops) take(batch []*Writer) []*Writer {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := min(writersTake, len(w.ready)-w.head)
	batch = append(batch[:0], w.ready[w.head:w.head+n]...)
	clear(w.ready[w.head : w.head+n])
	if w.head += n; w.head == len(w.ready) {
		w.ready, w.head = w.ready[:0], 0
	}
	return batch
}

func (w *Loops) run(wake chan struct{}) {
	defer w.wg.Done()
	batch := make([]*Writer, 0, writersTake)
	for range wake {
		for {
			if batch = w.take(batch); len(batch) == 0 {
				break
			}
			for i, l := range batch {
				l.runNow()
				batch[i] = nil
			}
		}
	}
}

// nowWriter is a Transport that can write its events without waiting: the
// ones a writer loop takes.
type nowWriter interface {
	// Append buffers ev; it never writes.
	Append(ev *Event)
	// FlushNow writes what the socket takes of the buffer now, keeping the
	// rest for Flush: done when nothing is left.
	FlushNow() (done bool, err error)
}
