package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
		{"scenario without target", []string{"sse-fanout", "-n", "5"}, 2, "", "--target is required", 0},
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
