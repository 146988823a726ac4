package playground

import (
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/custom"
	"github.com/wasmgap/wasmgap/internal/loadpage"
)

// TestSlowBodyIs408 (issue 21, item 17; the results share: issue 39, item 10):
// a body that does not arrive within BodyTimeout gets 408 on every route that
// reads one, as docs/SECURITY.md says, and the answer names no address of the
// connection.
func TestSlowBodyIs408(t *testing.T) {
	store := tempStore(t)
	ts := fakeServer(t, Options{
		BodyTimeout: 300 * time.Millisecond,
		Custom:      custom.NewBuilder(custom.Options{Dir: t.TempDir()}),
		Load:        loadpage.Handler(loadpage.Options{BaseURL: "http://127.0.0.1:1", ChatPath: "/chat/"}),
		Results:     store,
	}, instantRun)
	for _, path := range []string{"/api/run", "/api/custom", "/load/run", "/api/results/share"} {
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		body := `{"kernel":"fib_it","engine":"native"}`
		if _, err := io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
			"Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body[:3]); err != nil {
			t.Fatal(err)
		}
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		got, _ := io.ReadAll(conn)
		conn.Close()
		answer := string(got)
		if !strings.HasPrefix(answer, "HTTP/1.1 408") || !strings.Contains(answer, "did not arrive within 300ms") {
			t.Errorf("POST %s with a slow body: %q, want 408 saying the body did not arrive in time", path, answer)
		}
		if strings.Contains(answer, "127.0.0.1") || strings.Contains(answer, "i/o timeout") {
			t.Errorf("POST %s: the answer names the connection: %q", path, answer)
		}
	}
}
