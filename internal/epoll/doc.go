// Package epoll is the project's one wrapper of Linux's epoll, shared by the
// chat server's watcher of idle connections (chatserver/internal/nbio) and
// the load generator's event loops (load): a Set of file descriptors, each
// registered with a 64-bit token that its events carry back, waited on
// in a system call through Go's scheduler (Wait), in Go's netpoller
// (Await), or polled without either (Poll). It has no
// other state: the callers keep what a token stands for. Linux only; its
// importers are Linux files too.
package epoll
