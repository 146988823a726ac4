package stream

import (
	"net"
	"sync"

	"github.com/wasmgap/wasmgap/chatserver/internal/nbio"
)

// ServeHijacked runs an event stream on nc, a connection taken over by
// Hijack, whose client sends nothing more: start starts the stream's
// writer with the onEnd it is given (Start's), and finish, called once on a
// goroutine of its own when the client went or the stream ended, stops it
// (Writer.Stop) and lets go of what its owner holds; nc is closed after it.
//
// The client's going is told by w, one epoll set for every idle stream,
// so an idle stream holds no goroutine at all; where w cannot watch nc (nil,
// or not Linux) a goroutine reads nc until the client goes. ServeHijacked
// returns at once.
func ServeHijacked(nc net.Conn, w *nbio.Watcher, start func(onEnd func()) *Writer, finish func(*Writer)) {
	var (
		live  *Writer
		watch nbio.Watch
		ready = make(chan struct{})
		once  sync.Once
	)
	end := func(ended bool) {
		go func() {
			<-ready
			once.Do(func() {
				watch.Stop() // before nc's descriptor is closed, and maybe reused
				if ended {
					// The stream ended (cut, a write failed): its client
					// learns it at once, by a reset when it was reading
					// nothing.
					if live.Stalled() {
						nbio.ResetOnClose(nc)
					}
					nc.Close()
				}
				finish(live)
				nc.Close()
			})
		}()
	}
	watch, err := w.Watch(nc, func() { end(false) })
	live = start(func() { end(true) })
	close(ready)
	if err != nil {
		go func() {
			var b [64]byte
			for {
				if _, err := nc.Read(b[:]); err != nil {
					break
				}
			}
			end(false)
		}()
	}
}
