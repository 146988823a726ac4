package results

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// savedStore makes an SQLite store at a fresh path holding runs with enough samples to
// span several pages, closes it and returns its path.
func savedStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.db")
	s := open(t, path)
	samples := make([]float64, 2000)
	for i := range samples {
		samples[i] = float64(1000 + i)
	}
	for range 20 {
		if _, err := s.Save(context.Background(), NewRun(SourceServer, testReport("linux", 8, cell("fib_rec", []int{30}, "native", samples...)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A store cut to 0 bytes is refused, naming the file: it is not a new store, and
// starting empty would lose every run silently. A path with no file is a new store.
func TestOpenRefusesAnEmptiedFile(t *testing.T) {
	path := savedStore(t)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), path)
	if err == nil {
		s.Close()
		t.Fatal("a store truncated to 0 bytes was opened")
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "0 bytes") {
		t.Errorf("error %q, want one naming %s and its 0 bytes", err, path)
	}
	if st, err := os.Stat(path); err != nil || st.Size() != 0 {
		t.Errorf("the refused file was changed: %v %v", st, err)
	}
	open(t, filepath.Join(t.TempDir(), "new", "results.db")) // a new store opens
}

// A store whose pages are damaged is refused at start (PRAGMA quick_check), naming the
// file, rather than served.
func TestOpenChecksTheFile(t *testing.T) {
	path := savedStore(t)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	const page = 4096
	if st.Size() < 8*page {
		t.Fatalf("the store has %d bytes: too few pages to damage one in the middle", st.Size())
	}
	garbage := []byte(strings.Repeat("\xa5garbage", page/8))
	if _, err := f.WriteAt(garbage, (st.Size()/page/2)*page); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s, err := Open(context.Background(), path)
	if err == nil {
		s.Close()
		t.Fatal("a store with a damaged page was opened")
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("error %q, want one naming %s damaged", err, path)
	}
}
