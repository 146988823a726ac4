package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		data []byte
		want string // a part of the problem, or "" for none
	}{
		{"source.go", []byte("package main\n"), ""},
		{"empty", nil, ""},
		{"short", []byte("M"), ""},
		{"elf", []byte("\x7fELF\x02\x01\x01"), "ELF executable"},
		{"exe", []byte("MZ\x90\x00"), "PE executable"},
		{"macho", []byte{0xcf, 0xfa, 0xed, 0xfe, 7}, "Mach-O"},
		{"kernels.wasm", []byte("\x00asm\x01\x00\x00\x00"), "WebAssembly module"},
		{"big.txt", []byte(strings.Repeat("x", maxFileBytes+1)), "over the limit"},
		{"limit.txt", []byte(strings.Repeat("x", maxFileBytes)), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkFile(write(tt.name, tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("checkFile(%s) = %q, want a problem containing %q", tt.name, got, tt.want)
			}
		})
	}
	if got, err := checkFile(filepath.Join(dir, "deleted")); err != nil || got != "" {
		t.Errorf("a tracked file missing from the work tree: got %q, %v; want no problem", got, err)
	}
}
