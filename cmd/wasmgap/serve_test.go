package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServeFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		says string
	}{
		{[]string{"extra"}, 2, "serve takes flags only"},
		{[]string{"-dist", "/no/such/folder"}, 2, "is not a folder"},
		{[]string{"-max-concurrent", "-1"}, 2, "must not be negative"},
		{[]string{"-read-header-timeout", "-1s"}, 2, "must not be negative"},
		{[]string{"-allow-host", "bad host/x"}, 2, "allow-host"},
		{[]string{"-addr", "256.0.0.1:bad", "-data", filepath.Join(t.TempDir(), "chat"), "-no-custom"}, 1, "wasmgap serve:"},
		{[]string{"-nope"}, 2, "flag provided but not defined"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := runServe(tt.args, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stderr.String(), tt.says) {
			t.Errorf("serve %q: exit %d, stderr %q; want %d mentioning %q", tt.args, code, stderr.String(), tt.code, tt.says)
		}
	}
}

// wasmgap serve mounts the chat under /chat/ and the load page under /load/ beside the
// playground's API, and drains all of them on SIGTERM.
func TestServeMountsChatAndLoad(t *testing.T) {
	data := filepath.Join(t.TempDir(), "chat")
	cmd, line, out, stderr := startSubcommand(t, "serve --addr 127.0.0.1:0 --data "+data)
	// "wasmgap playground on http://127.0.0.1:PORT/ (chat store in ...)"
	base := strings.Fields(line)[3]

	get := func(path string) (string, http.Header) {
		t.Helper()
		resp, err := http.Get(base + strings.TrimPrefix(path, "/"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s %s", path, resp.Status, body)
		}
		return string(body), resp.Header
	}
	var kernels struct {
		Panels map[string]bool `json:"panels"`
	}
	body, _ := get("/api/kernels")
	if err := json.Unmarshal([]byte(body), &kernels); err != nil {
		t.Fatalf("/api/kernels: %v", err)
	}
	if !kernels.Panels["chat"] || !kernels.Panels["load"] {
		t.Errorf("panels = %v, want chat and load", kernels.Panels)
	}
	if page, _ := get("/chat/"); !strings.Contains(page, "<html") {
		t.Errorf("/chat/ is not the chat page: %.200q", page)
	}
	if page, _ := get("/load/"); !strings.Contains(page, "<html") {
		t.Errorf("/load/ is not the load page: %.200q", page)
	}

	// A chat stream under /chat/ is told to resume when the server stops.
	checkSIGTERMDrains(t, cmd, base+"chat/john", out, stderr, "playground stopped: ")
}

// A results store that is refused stops serve before it listens, naming the file: here
// the address is taken, so a server that listened first would say that instead.
func TestServeChecksResultsBeforeListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	db := filepath.Join(t.TempDir(), "results.db")
	if err := os.WriteFile(db, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := runServe([]string{"--addr", ln.Addr().String(), "--data", filepath.Join(t.TempDir(), "chat"), "--no-custom", "--results-db", db}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), db) || !strings.Contains(stderr.String(), "0 bytes") {
		t.Errorf("exit %d, stderr %q; want 1 naming %s and its 0 bytes", code, stderr.String(), db)
	}
}
