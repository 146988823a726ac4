package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteAt: a record is written whole at its offset, small (raw
// pwrite) or large (Go's wrapper), and a write the file refuses is an
// *os.PathError naming it, with the system's error.
func TestWriteAt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	small := []byte("a small record")
	large := bytes.Repeat([]byte("large "), rawWriteMax/6+100)
	if err := writeAt(f, small, 10); err != nil {
		t.Fatal(err)
	}
	if err := writeAt(f, large, 10+int64(len(small))); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(make([]byte, 10), small...), large...)
	if !bytes.Equal(got, want) {
		t.Fatalf("the file holds %d bytes, not the %d written at their offsets", len(got), len(want))
	}

	ro, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	var pe *os.PathError
	if err := writeAt(ro, small, 0); !errors.As(err, &pe) || pe.Path != path || !errors.Is(err, syscall.EBADF) {
		t.Fatalf("write to a file opened read-only: %v; want an *os.PathError naming %s, EBADF", err, path)
	}
}
