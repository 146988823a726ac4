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

// A named exception may be binary and over 1 MB, up to its own limit; the same file
// anywhere else may not.
func TestExceptions(t *testing.T) {
	t.Chdir(t.TempDir())
	module := append([]byte("\x00asm\x01\x00\x00\x00"), make([]byte, 2<<20)...)
	for _, name := range []string{"wasm/kernels.wasm", "web/kernels.wasm"} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, module, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := checkFile("wasm/kernels.wasm"); err != nil || got != "" {
		t.Errorf("wasm/kernels.wasm (2 MB): %q, %v; want no problem", got, err)
	}
	if got, _ := checkFile("web/kernels.wasm"); !strings.Contains(got, "over the limit") {
		t.Errorf("web/kernels.wasm (2 MB): %q, want over the limit", got)
	}
	if err := os.WriteFile("wasm/kernels.wasm", make([]byte, exceptions["wasm/kernels.wasm"].maxBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := checkFile("wasm/kernels.wasm"); !strings.Contains(got, "over its own limit") {
		t.Errorf("wasm/kernels.wasm over its limit: %q, want a problem", got)
	}
}
