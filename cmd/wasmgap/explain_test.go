package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestExplainFlags(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--format", "xml"}, 2, "text or json"},
		{[]string{"--engine", "nope"}, 2, "explain knows"},
		{[]string{"--kernel", "nope"}, 2, "nope"},
		{[]string{"--arg", "n=200"}, 2, "out of range"},
		{[]string{"--warmup-time", "1m"}, 2, "--warmup-time: explain's warm-up time = 1m0s is out of range: allowed 0 (the first call only) to 10s"},
		{[]string{"--profile-time", "1ms"}, 2, "--profile-time"},
		{[]string{"--engine", "wasmtime"}, 2, "Cranelift"},
		{[]string{"extra"}, 2, "unexpected arguments"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := run(append([]string{"explain"}, tt.args...), &out, &errb)
		if code != tt.code || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("explain %v: exit %d, stderr %q; want %d and %q", tt.args, code, errb.String(), tt.code, tt.want)
		}
	}
}

func TestExplainSourceAsJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"explain", "--kernel", "fib_rec", "--arg", "n=20", "--engine", "source", "--format", "json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep struct {
		Label   string
		Engines []struct {
			Engine   string
			Listings []struct {
				RecursiveCalls int `json:"recursive_calls"`
				Lines          []json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Label != "fib_rec(20)" || len(rep.Engines) != 1 || len(rep.Engines[0].Listings) != 1 || rep.Engines[0].Listings[0].RecursiveCalls != 1 {
		t.Errorf("got %s", out.String())
	}
}

// TestExplainTextSaysEachTierAndEndsWithASummary: a line per tier on stderr as it is
// done, the listing, and a summary table in words at the end of stdout.
func TestExplainTextSaysEachTierAndEndsWithASummary(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"explain", "--kernel", "fib_rec", "--arg", "n=20", "--engine", "source"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "\n  source: Go source, ") {
		t.Errorf("stderr %q: want a line for the source as it is done", errb.String())
	}
	_, summary, ok := strings.Cut(out.String(), "\nSummary of fib_rec(20):\n")
	if !ok || !strings.Contains(summary, "source") || !strings.Contains(summary, "6 lines; calls itself at 1 place") {
		t.Errorf("stdout ends %q: want a summary that says the source's 6 lines call fib_rec at 1 place", summary)
	}
}
