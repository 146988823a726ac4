package fastpath

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
)

// Listen listens on a TCP address for Serve. For the host "localhost" it
// listens on both loopback addresses, 127.0.0.1 and ::1 (when the machine
// has IPv6), because clients differ in which one they pick for "localhost":
// ab, for one, takes the first answer of the resolver, often ::1.
//
// Its connections have no TCP keep-alive (Go turns it on for every accepted
// connection, with system calls of its own): an idle HTTP connection ends
// after IdleTimeout and a stream finds a dead client with its KeepAlive
// pings. On Linux they are accepted once their first request has arrived
// (deferAccept).
func Listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w (use host:port, e.g. 127.0.0.1:8000)", addr, err)
	}
	if host != "localhost" {
		ln, err := listenTCP(addr)
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w", addr, err)
		}
		return ln, nil
	}
	ln4, err := listenTCP(net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	_, port, _ = net.SplitHostPort(ln4.Addr().String()) // the chosen port, for port 0
	ln6, err := listenTCP(net.JoinHostPort("::1", port))
	if err != nil {
		return ln4, nil // no IPv6 loopback: 127.0.0.1 alone
	}
	return newMultiListener(ln4, ln6), nil
}

// multiListener accepts from several listeners as one. Its accepting
// goroutines start with the first Accept: a Listener that accepts from
// each listener itself (nbio.Acceptor) never calls it.
type multiListener struct {
	lns   []net.Listener
	conns chan net.Conn
	errs  chan error
	done  chan struct{}
	start sync.Once
	once  sync.Once
}

func newMultiListener(lns ...net.Listener) *multiListener {
	return &multiListener{lns: lns, conns: make(chan net.Conn), errs: make(chan error, len(lns)), done: make(chan struct{})}
}

func (m *multiListener) accept() {
	for _, ln := range m.lns {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					m.errs <- err
					return
				}
				select {
				case m.conns <- c:
				case <-m.done:
					c.Close()
					return
				}
			}
		}()
	}
}

func (m *multiListener) Accept() (net.Conn, error) {
	m.start.Do(m.accept)
	select {
	case c := <-m.conns:
		return c, nil
	case err := <-m.errs:
		m.Close()
		return nil, err
	case <-m.done:
		return nil, net.ErrClosed
	}
}

func (m *multiListener) Close() error {
	var errs []error
	m.once.Do(func() {
		close(m.done)
		for _, ln := range m.lns {
			errs = append(errs, ln.Close())
		}
	})
	return errors.Join(errs...)
}

func (m *multiListener) Addr() net.Addr { return m.lns[0].Addr() }

var listenConfig = net.ListenConfig{KeepAlive: -1, Control: deferAccept}

func listenTCP(addr string) (net.Listener, error) {
	return listenConfig.Listen(context.Background(), "tcp", addr)
}
