package load

import (
	"context"
	"net"
	"testing"
)

// A refused connection is worded once, "connection refused", whichever client met it:
// the kind (connect) already says that connecting failed.
func TestConnectErrorWordedOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, c := range []Client{ClientRaw, ClientStd, ClientEpoll} {
		rep, err := Run(context.Background(), Options{Request: Request{URL: "http://" + addr}, Connections: 1, Requests: 3, Client: c})
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.ErrorExamples[ErrConnect]; got != "connection refused" {
			t.Errorf("%s: a refused connection reads %q, want \"connection refused\"", c, got)
		}
	}
}
