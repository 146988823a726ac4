package benchtool

import (
	"strings"
	"testing"
	"time"
)

// A Markdown table has its rule under the header, numbers right-aligned; a text table
// aligns its columns.
func TestTable(t *testing.T) {
	var md, text strings.Builder
	for _, c := range []struct {
		b        *strings.Builder
		markdown bool
	}{{&md, true}, {&text, false}} {
		tb := NewTable(c.b, c.markdown, "lr", "server", "req/s")
		tb.Row("nginx", "12000")
		tb.Row("wasmgap chat", "9")
		tb.Flush()
	}
	if want := "| server | req/s |\n| --- | ---: |\n| nginx | 12000 |\n| wasmgap chat | 9 |\n"; md.String() != want {
		t.Errorf("Markdown table:\n%s\nwant:\n%s", md.String(), want)
	}
	if want := "server        req/s\nnginx         12000\nwasmgap chat  9\n"; text.String() != want {
		t.Errorf("text table:\n%q\nwant:\n%q", text.String(), want)
	}
}

func TestP99AndRates(t *testing.T) {
	for _, c := range []struct {
		tool string
		d    time.Duration
		want string
	}{
		{"ab", 2500 * time.Microsecond, "2 ms"},
		{"wrk", 800 * time.Microsecond, "800 µs"},
		{"wrk", 2500 * time.Microsecond, "2.50 ms"},
	} {
		if got := P99(c.tool, c.d); got != c.want {
			t.Errorf("P99(%s, %v) = %q, want %q", c.tool, c.d, got, c.want)
		}
	}
	if got := Rates([]float64{1000.4, 999.6}); got != "1000 1000" {
		t.Errorf("Rates = %q", got)
	}
}
