//go:build !linux

package nbio

import (
	"errors"
	"net"
)

// Watcher is Linux's (watch_linux.go); elsewhere NewWatcher fails and its
// callers read each connection on a goroutine of their own.
type Watcher struct{}

// Watch is one connection's watch.
type Watch struct{}

func NewWatcher() (*Watcher, error)                      { return nil, errors.ErrUnsupported }
func (w *Watcher) Watch(net.Conn, func()) (Watch, error) { return Watch{}, errors.ErrUnsupported }
func (w *Watcher) Readable(net.Conn, func()) (Watch, error) {
	return Watch{}, errors.ErrUnsupported
}
func (w *Watcher) Close()  {}
func (s Watch) Stop() bool { return false }
