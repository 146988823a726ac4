//go:build !linux

package fastpath

import "syscall"

// deferAccept is Linux's TCP_DEFER_ACCEPT (listen_linux.go); elsewhere none.
func deferAccept(network, address string, c syscall.RawConn) error { return nil }
