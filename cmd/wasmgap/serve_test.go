package main

import (
	"bytes"
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
		{[]string{"-addr", "256.0.0.1:bad"}, 1, "wasmgap serve:"},
		{[]string{"-nope"}, 2, "flag provided but not defined"},
		{[]string{"-h"}, 0, "usage: wasmgap serve"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := runServe(tt.args, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stderr.String(), tt.says) {
			t.Errorf("serve %q: exit %d, stderr %q; want %d mentioning %q", tt.args, code, stderr.String(), tt.code, tt.says)
		}
	}
}
