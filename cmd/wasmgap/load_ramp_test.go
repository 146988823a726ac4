package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLoadRamp: -ramp paces an open-model run (plain HTTP and a chat scenario) with a
// linear ramp that the report names, and needs a rate to ramp up to.
func TestLoadRamp(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") }))
	defer srv.Close()
	chatURL, stop, err := startInProcessChat()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	tests := []struct {
		name   string
		args   []string
		ok     bool
		stdout string
		stderr string
	}{
		{"http", []string{"-n", "20", "-c", "2", "-R", "400", "-ramp", "50ms", srv.URL}, true, "400 requests/s intended (ramped up from 0 over 50ms)", ""},
		{"chat-send", []string{"chat-send", "--target", chatURL, "-n", "10", "-k", "2", "-R", "200", "-ramp", "50ms", "--drain", "1m"}, true, "(ramped up from 0 over 50ms)", ""},
		{"no rate", []string{"-n", "1", "-ramp", "1s", srv.URL}, false, "", "needs a rate"},
		{"negative", []string{"chat-send", "--target", chatURL, "-n", "1", "-R", "10", "-ramp", "-1s"}, false, "", "must not be negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"load"}, tc.args...), &stdout, &stderr)
			if (code == 0) != tc.ok {
				t.Fatalf("exit %d, want success %v\nstdout: %s\nstderr: %s", code, tc.ok, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stdout lacks %q or stderr lacks %q:\nstdout: %s\nstderr: %s", tc.stdout, tc.stderr, stdout.String(), stderr.String())
			}
		})
	}
}
