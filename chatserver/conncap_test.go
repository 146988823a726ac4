package chatserver

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// dialFrom opens a connection to the test server from the loopback
// address ip (any of 127.0.0.0/8).
func dialFrom(t *testing.T, ts *testServer, ip string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", ts.hostPort())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestConnCapEvictsHeaviest: with every connection Serve may hold taken
// by slow clients of one address, the page is still answered to another
// address (the slow address gives up its oldest), and the slow address
// itself gets 503 for one more.
func TestConnCapEvictsHeaviest(t *testing.T) {
	const cap = 10
	ts, _ := serveOn(t, Options{MaxConns: cap, ReadHeaderTimeout: time.Minute})
	var slow []net.Conn
	for range cap {
		c := dialFrom(t, ts, "127.0.0.2")
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n", ts.hostPort()) // and never the rest
		slow = append(slow, c)
	}
	// The server holds them all (a connection is accepted once bytes came).
	time.Sleep(200 * time.Millisecond)

	page := dialFrom(t, ts, "127.0.0.3")
	fmt.Fprintf(page, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", ts.hostPort())
	page.SetReadDeadline(time.Now().Add(waitFor))
	resp, err := http.ReadResponse(bufio.NewReader(page), nil)
	if err != nil {
		t.Fatalf("the page, from another address, with the server's connections all taken: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the page: %s", resp.Status)
	}
	closed := 0
	for _, c := range slow {
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err == io.EOF || err != nil && !isTimeout(err) {
			closed++
		}
	}
	if closed != 1 {
		t.Fatalf("%d of the slow address's connections were closed, want its oldest alone", closed)
	}

	// The page's connection closed: one slot is free, and taken again.
	refill := dialFrom(t, ts, "127.0.0.2")
	fmt.Fprintf(refill, "GET / HTTP/1.1\r\nHost: %s\r\n", ts.hostPort())
	time.Sleep(200 * time.Millisecond)
	more := dialFrom(t, ts, "127.0.0.2")
	fmt.Fprintf(more, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", ts.hostPort())
	more.SetReadDeadline(time.Now().Add(waitFor))
	resp, err = http.ReadResponse(bufio.NewReader(more), nil)
	if err != nil {
		t.Fatalf("one more from the address holding the most: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("one more from the address holding the most: %s, want 503", resp.Status)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
