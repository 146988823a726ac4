package benchtool

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Table writes the benchmark scripts' tables: aligned text, or with Markdown a Markdown
// table, as docs/BENCHMARKS.md takes them.
type Table struct {
	w  io.Writer
	md bool
	tw *tabwriter.Writer
}

// NewTable starts a table of the header's columns on w; align has one letter a column,
// 'r' for a column of numbers (right-aligned in Markdown), any other for text.
func NewTable(w io.Writer, markdown bool, align string, header ...string) *Table {
	t := &Table{w: w, md: markdown}
	if !markdown {
		t.tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	}
	t.Row(header...)
	if markdown {
		rule := make([]string, len(header))
		for i := range rule {
			rule[i] = "---"
			if i < len(align) && align[i] == 'r' {
				rule[i] = "---:"
			}
		}
		t.Row(rule...)
	}
	return t
}

// Row writes one row.
func (t *Table) Row(cells ...string) {
	if t.md {
		fmt.Fprintf(t.w, "| %s |\n", strings.Join(cells, " | "))
	} else {
		fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
	}
}

// Flush ends the table.
func (t *Table) Flush() {
	if t.tw != nil {
		t.tw.Flush()
	}
}

// PrintHeader writes the lines above a table (the machine, the tools' versions), as a
// Markdown list with markdown, then a blank line.
func PrintHeader(w io.Writer, markdown bool, lines []string) {
	for _, l := range lines {
		if markdown {
			l = "- " + l
		}
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w)
}

// P99 writes a tool's 99th percentile: ab's in whole milliseconds (it prints no finer),
// others in µs under a millisecond, else in ms.
func P99(tool string, d time.Duration) string {
	switch {
	case tool == "ab":
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// Rates writes each run's requests per second, whole, separated by spaces.
func Rates(rps []float64) string {
	s := make([]string, len(rps))
	for i, v := range rps {
		s[i] = strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strings.Join(s, " ")
}
