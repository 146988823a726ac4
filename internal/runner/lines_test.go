package runner

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
)

// writeLongLine is a worker that writes one line of 2 MiB, as the result of a failure
// with a big text (a panic's) makes it, and ends.
func writeLongLine() {
	long := strings.Repeat("B", 2<<20)
	for i := 0; i < len(long); i += 64 << 10 {
		os.Stdout.WriteString(long[i : i+64<<10])
	}
	os.Stdout.WriteString("\n")
	os.Exit(0)
}

// A worker's output line over 1 MiB is refused whole, as one long line: neither cut and
// its tail read as a line of its own, nor taken for what follows it.
func TestWorkerLongLine(t *testing.T) {
	t.Setenv(testLongLineEnv, "1")
	job := oneJob(t, "native", "fib_it", map[string]int{"n": 1}, measure.Options{Runs: 1}, 30*time.Second)
	r, err := Run(context.Background(), job, Options{})
	if err == nil {
		t.Fatalf("Run = %+v, want the long line refused", r)
	}
	if !strings.Contains(err.Error(), "output line over 1 MiB") || strings.Contains(err.Error(), "BBBB") {
		t.Errorf("Run: %v, want it to say the worker wrote a line over 1 MiB", err)
	}
}

// lineWriter hands on every line up to maxLine bytes, refuses a longer one once (onLong)
// however it arrives, and reads the lines after it as they are.
func TestLineWriter(t *testing.T) {
	for _, chunk := range []int{1 << 10, 64 << 10, 3 << 20} {
		var lines []string
		long := 0
		w := &lineWriter{onLine: func(b []byte) { lines = append(lines, string(b)) }, onLong: func() { long++ }}
		in := "first\n" + strings.Repeat("B", maxLine) + "\n" + strings.Repeat("C", maxLine+1) + "\nlast\nflushed"
		for i := 0; i < len(in); i += chunk {
			w.Write([]byte(in[i:min(i+chunk, len(in))]))
		}
		w.flush()
		if long != 1 || len(lines) != 4 || lines[0] != "first" || len(lines[1]) != maxLine || lines[2] != "last" || lines[3] != "flushed" {
			short := make([]string, len(lines))
			for i, l := range lines {
				short[i] = truncate(l, 20)
			}
			t.Errorf("chunks of %d: %d long lines, lines %q; want 1 long and first, %d B, last, flushed", chunk, long, short, maxLine)
		}
	}
}
