package chatserver

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/auth"
)

// TestNATSClaims: a nick claimed on one node of a chat over NATS is
// claimed on every node, for logins and sends, and its claim ends with its
// grace after the last stream on any node.
func TestNATSClaims(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a NATS server")
	}
	nc := startNATSCluster(t, 3)
	// A claim holds for the retention after its last stream: short here.
	a := startNATSNode(t, nc, Options{ClaimNicks: true, LeaveGrace: -1, Retention: 2 * time.Second})
	b := startNATSNode(t, nc, Options{ClaimNicks: true, LeaveGrace: -1, Retention: 2 * time.Second})
	status, body, h, bob := a.sseLogin(t, "bob", "", nil)
	if status != 200 {
		t.Fatalf("bob's first login on node a: %d %s", status, body)
	}
	secret := h.Get(auth.ClaimHeader)
	if secret == "" {
		t.Fatal("no claim secret")
	}
	waitText(t, bob, "Welcome bob!")
	if status, body, _, _ := b.sseLogin(t, "bob", "", nil); status != 403 || !strings.Contains(body, "claimed") {
		t.Errorf("bob on node b without the secret: %d %q, want 403", status, body)
	}
	status, body, h, bob2 := b.sseLogin(t, "bob", "", http.Header{auth.ClaimHeader: {secret}})
	if status != 200 || h.Get(auth.ClaimHeader) != "" {
		t.Fatalf("bob on node b with the secret: %d %s (new claim %q)", status, body, h.Get(auth.ClaimHeader))
	}
	waitText(t, bob2, "Welcome bob!")
	for _, tc := range []struct {
		path   string
		header http.Header
		status int
	}{
		{"/msg/bob/all%20forged", nil, 403},
		{"/msg/bob/all%20mine", http.Header{auth.ClaimHeader: {secret}}, 200},
		{"/msg/mary/all%20open", nil, 200},
	} {
		if status, body := b.send(t, "GET", tc.path, "", tc.header); status != tc.status {
			t.Errorf("node b: GET %s: %d %q, want %d", tc.path, status, body, tc.status)
		}
	}
	waitText(t, bob, "bob to all: mine")
	// Node a's stream closes: node b's still holds the claim.
	bob.close()
	if status, _, _, _ := a.sseLogin(t, "bob", "", nil); status != 403 {
		t.Errorf("bob on node a while node b holds the claim: %d, want 403", status)
	}
	// The last stream closes: with no grace, past the retention, the next
	// login claims bob afresh.
	bob2.close()
	deadline := time.Now().Add(natsTestTime)
	for {
		status, body, h, c := a.sseLogin(t, "bob", "", nil)
		if status == 200 {
			if s := h.Get(auth.ClaimHeader); s == "" || s == secret {
				t.Errorf("the new claim's secret %q (the old %q)", s, secret)
			}
			c.close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob's claim never ended: %d %s", status, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestNATSTokens: tokens hold on every node that shares the secret.
func TestNATSTokens(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a NATS server")
	}
	nc := startNATSCluster(t, 3)
	a := startNATSNode(t, nc, Options{AuthSecret: testSecret})
	b := startNATSNode(t, nc, Options{AuthSecret: testSecret})
	_, _, _, bob := a.sseLogin(t, "bob", "token="+mint(t, "bob", time.Hour), nil)
	if bob == nil {
		t.Fatal("bob's login with his token on node a was refused")
	}
	waitText(t, bob, "Welcome bob!")
	if status, body := b.send(t, "GET", "/msg/bob/all%20forged", "", bearer(mint(t, "mallory", time.Hour))); status != 403 {
		t.Errorf("node b: a send as bob with mallory's token: %d %q", status, body)
	}
	if status, body := b.send(t, "GET", "/msg/alice/bob%20hi", "", bearer(mint(t, "alice", time.Hour))); status != 200 {
		t.Fatalf("node b: alice's send: %d %s", status, body)
	}
	waitText(t, bob, "alice: hi")
}
