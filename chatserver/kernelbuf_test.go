package chatserver

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/stream"
)

// sendQueue is the bytes the kernel holds to send on the TCP socket from
// local to remote (tx_queue in /proc/net/tcp), and whether it is there.
func sendQueue(t *testing.T, local, remote *net.TCPAddr) (int, bool) {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Skip("no /proc/net/tcp:", err)
	}
	hexAddr := func(a *net.TCPAddr) string {
		ip := a.IP.To4()
		return fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], a.Port)
	}
	want := hexAddr(local) + " " + hexAddr(remote)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[1]+" "+f[2] == want {
			tx, _, _ := strings.Cut(f[4], ":")
			n, _ := strconv.ParseInt(tx, 16, 64)
			return int(n), true
		}
	}
	return 0, false
}

// stalledSSE logs nick in over SSE on a connection with a 4 KiB receive
// buffer that is never read.
func stalledSSE(t *testing.T, ts *testServer, nick string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	c, err := d.Dial("tcp4", ts.hostPort())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /%s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", nick, ts.hostPort())
	c.SetReadDeadline(time.Now().Add(waitFor))
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.Contains(line, "200") {
		t.Fatalf("%s's login: %q %v", nick, line, err)
	}
	return c
}

// TestStalledStreamKernelMemory: a stream whose client reads nothing holds
// at most its small send buffer in the kernel, however much is broadcast
// (the rest waits in its bounded queue); cut as a slow consumer, its
// socket is reset, so the kernel lets go of that too at once.
func TestStalledStreamKernelMemory(t *testing.T) {
	ts, _ := serveOn(t, Options{LeaveGrace: -1, QueueSize: 400, SendRate: -1})
	stalled := stalledSSE(t, ts, "stalled")
	server, client := stalled.RemoteAddr().(*net.TCPAddr), stalled.LocalAddr().(*net.TCPAddr)
	text := strings.Repeat("x", 3000)
	most := 0
	for i := range 300 {
		if status, body := ts.post(t, "sender", "all", fmt.Sprint(i, text)); status != 200 {
			t.Fatalf("broadcast %d: %d %s", i, status, body)
		}
		if n, ok := sendQueue(t, server, client); ok {
			most = max(most, n)
		}
	}
	// The kernel doubles SO_SNDBUF for its bookkeeping.
	if limit := 2 * stream.SendBuffer(4096); most == 0 || most > limit {
		t.Fatalf("the stalled stream's socket held up to %d bytes in the kernel, want some and at most %d", most, limit)
	}
	// 300 of 3 KB broadcasts: its queue of 400 holds them; 200 more cut it.
	for i := range 200 {
		ts.post(t, "sender", "all", fmt.Sprint("more ", i, text))
	}
	ts.waitStreams(t, "stalled", -1)
	for deadline := time.Now().Add(waitFor); ; time.Sleep(20 * time.Millisecond) {
		n, ok := sendQueue(t, server, client)
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cut stream's socket still holds %d bytes in the kernel: not reset", n)
		}
	}
}

// TestAddrBudgetCutsStalledStreams: the streams of one address that read
// nothing are cut once the bytes they hold unread (queued here, and their
// kernel send buffers) pass MaxQueuedBytesPerAddr, long before their own
// queues fill; a new stream that does not fit is refused.
func TestAddrBudgetCutsStalledStreams(t *testing.T) {
	reserve := int64(2 * stream.SendBuffer(4096))
	var logs syncBuffer
	ts, _ := serveOn(t, Options{LeaveGrace: -1, QueueSize: 10000, SendRate: -1,
		MaxQueuedBytesPerAddr: 2*reserve + reserve/2, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	stalledSSE(t, ts, "one")
	stalledSSE(t, ts, "two")
	if status, body, _, c := ts.sseLogin(t, "three", "", nil); status != http.StatusTooManyRequests || !strings.Contains(body, "have not read") {
		if c != nil {
			c.close()
		}
		t.Fatalf("a third stream, its kernel buffer past the address's bytes: %d %q, want 429", status, body)
	}
	text := strings.Repeat("x", 3000)
	for i := range 400 { // 1.2 MB to each: far from 10,000 events
		if status, body := ts.post(t, "sender", "all", fmt.Sprint(i, text)); status != 200 {
			t.Fatalf("broadcast %d: %d %s", i, status, body)
		}
	}
	ts.waitStreams(t, "one", -1)
	ts.waitStreams(t, "two", -1)
	if !strings.Contains(logs.String(), "streams of this client address hold") {
		t.Errorf("the cut's reason is not the address's bytes:\n%s", logs.String())
	}
	// Their bytes given back: the address may open streams again.
	if status, body, _, c := ts.sseLogin(t, "three", "", nil); status != 200 {
		t.Fatalf("a stream after the cut ones ended: %d %s", status, body)
	} else {
		c.close()
	}
}
