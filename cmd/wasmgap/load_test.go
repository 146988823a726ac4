package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestLoadCommand(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Method+" "+r.Header.Get("X-A")+"\n")
	}))
	defer srv.Close()
	chatURL, stop, err := startInProcessChat()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	chatURL2, stop2, err := startInProcessChat()
	if err != nil {
		t.Fatal(err)
	}
	defer stop2()
	// A chat that never welcomes anyone.
	mute := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer mute.Close()
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   string
		stderr   string
		jsonSent float64
	}{
		{"unbounded refused", []string{srv.URL}, 2, "", "unbounded", 0},
		{"zero bounds refused", []string{"-n", "0", "-d", "0", srv.URL}, 2, "", "unbounded", 0},
		{"no URL", []string{"-n", "1"}, 2, "", "exactly one URL", 0},
		{"bad format", []string{"-n", "1", "--format", "xml", srv.URL}, 2, "", "text or json", 0},
		{"bad header", []string{"-n", "1", "-H", "nocolon", srv.URL}, 2, "", "Name: value", 0},
		{"bad client", []string{"-n", "1", "--client", "curl", srv.URL}, 2, "", "client", 0},
		{"std with HTTP/1.0", []string{"-n", "1", "--client", "std", "--http1.0", srv.URL}, 2, "", "raw client", 0},
		{"text", []string{"-n", "50", "-c", "5", "-H", "X-A: b", srv.URL}, 0, "Requests/s:", "", 0},
		{"json", []string{"-n", "40", "-c", "4", "-m", "POST", "--body", "x", "--format", "json", srv.URL}, 0, `"requests_per_sec"`, "", 40},
		{"open model", []string{"-n", "20", "-c", "2", "-R", "400", srv.URL}, 0, "uncorrected", "", 0},
		{"ab parity", []string{"-n", "20", "-c", "2", "--http1.0", "--no-keepalive", srv.URL}, 0, "HTTP/1.0, new connection per request", "", 0},
		{"chat-send", []string{"chat-send", "--target", chatURL, "-n", "30", "-k", "3", "--drain", "1m"}, 0, "0 lost", "", 0},
		{"ws-fanout json", []string{"ws-fanout", "--target", chatURL, "-n", "5", "-s", "4", "-R", "100", "--drain", "1m", "--format", "json"}, 0, `"lost": 0`, "", 5},
		{"churn json", []string{"churn", "--target", chatURL, "-n", "6", "-R", "200", "--format", "json"}, 0, `"ok": 6`, "", 6},
		{"churn without a rate", []string{"churn", "--target", chatURL, "-n", "6"}, 2, "", "logins per second", 0},
		{"scenario without target", []string{"sse-fanout", "-n", "5"}, 2, "", "--target is required", 0},
		{"two targets, comma list", []string{"chat-send", "--target", chatURL + "," + chatURL2, "-n", "20", "-k", "4", "--drain", "1m"}, 0, "Target " + chatURL2 + ":", "", 0},
		{"two targets, repeated", []string{"sse-fanout", "--target", chatURL, "--target", chatURL2, "-n", "2", "-s", "2", "--drain", "1s"}, 3, "Target " + chatURL + ":", "", 0},
		{"bad target in a list", []string{"sse-fanout", "--target", chatURL + ",ftp://x/", "-n", "1"}, 2, "", "ftp://x/", 0},
		{"login concurrency 0", []string{"sse-fanout", "--target", chatURL, "-n", "1", "--login-concurrency", "0"}, 2, "", "--login-concurrency", 0},
		{"receivers not welcomed in time", []string{"sse-fanout", "--target", mute.URL, "-n", "1", "-s", "3", "--login-time", "200ms"}, 4, "0 welcomed", "only 0 of 3", 0},
		{"scenario unbounded", []string{"chat-send", "--target", chatURL}, 2, "", "unbounded", 0},
		{"progress bar forced on", []string{"-n", "300", "-c", "2", "--progress", "on", srv.URL}, 0, "Requests/s:", "done", 0},
		{"seed, scaled down", []string{"seed", "--scale", "100", "--target", chatURL}, 0, "historical", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"load"}, tc.args...), &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, stdout.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr.String())
			}
			if tc.jsonSent > 0 {
				var rep map[string]any
				if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
					t.Fatal(err)
				}
				if rep["sent"] != tc.jsonSent {
					t.Errorf("sent %v, want %v", rep["sent"], tc.jsonSent)
				}
			}
			if tc.code == 0 && tc.stderr == "" && stderr.Len() > 0 {
				t.Errorf("stderr not quiet when not a terminal: %q", stderr.String())
			}
		})
	}
}

// TestLoadSIGTERM: a run stopped by SIGTERM (a CI timeout, a supervisor) stops early and still
// prints its report, as with Ctrl-C.
func TestLoadSIGTERM(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") }))
	defer srv.Close()
	cmd, stdout, stderr := startWasmgap(t, "load -c 2 -d 5m --progress on "+srv.URL+"/")
	// The progress bar's first "run" line says the run has begun.
	seen := make(chan error, 1)
	go func() {
		buf := make([]byte, 4096)
		var all []byte
		for {
			n, err := stderr.Read(buf)
			all = append(all, buf[:n]...)
			if bytes.Contains(all, []byte("run")) {
				seen <- nil
				io.Copy(io.Discard, stderr)
				return
			}
			if err != nil {
				seen <- fmt.Errorf("stderr ended before any progress: %v: %q", err, all)
				return
			}
		}
	}()
	select {
	case err := <-seen:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no progress within 30s")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\nstdout: %s", err, stdout.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("wasmgap load did not exit within 30s of SIGTERM")
	}
	if !strings.Contains(stdout.String(), "cancelled before its bound") || !strings.Contains(stdout.String(), "Requests/s:") {
		t.Errorf("no report of the stopped run:\n%s", stdout.String())
	}
}

// A run in which requests fail exits 1 and says so; against a closed port nothing
// succeeds, and the error kind's example says the cause once ("connection refused"),
// whichever client met it.
func TestLoadFailedRequestsExit1(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/"
	ln.Close()
	for _, client := range []string{"epoll", "raw", "std"} {
		var stdout, stderr bytes.Buffer
		code := run([]string{"load", "-n", "5", "--client", client, closed}, &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), "wasmgap load: no request succeeded (5 sent, 5 failed)") {
			t.Errorf("%s client: exit %d, stderr %q; want 1 and that no request succeeded", client, code, stderr.String())
		}
		if out := stdout.String(); !strings.Contains(out, "(e.g. connection refused)") || strings.Contains(out, "connect: connect") {
			t.Errorf("%s client: the report words the error as:\n%s", client, out)
		}
	}
	// Some requests failing is a failure too.
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, "ok\n")
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"load", "-n", "10", srv.URL + "/"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "of 10 requests failed") {
		t.Errorf("half failing: exit %d, stderr %q; want 1 and how many failed", code, stderr.String())
	}
}
