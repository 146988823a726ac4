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
		{[]string{"--warmup-time", "1m"}, 2, "0 to 10s"},
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
