package explain

import (
	"fmt"
	"io"
	"path"
	"strings"
	"text/tabwriter"
)

// WriteHeader writes the report's first line: the call and the architecture.
func WriteHeader(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "%s on %s\n", rep.Label, rep.Arch)
}

// WriteEngine writes one engine's listings, or why it has none.
func WriteEngine(w io.Writer, e Explanation) {
	if e.Refused != "" {
		fmt.Fprintf(w, "\n== %s: not explained: %s\n", e.Engine, e.Refused)
		return
	}
	for _, l := range e.Listings {
		fmt.Fprintf(w, "\n== %s · %s · %s\n", e.Engine, l.Tier, l.Function)
		fmt.Fprintf(w, "   %s · %s\n", l.counts(), l.From)
		for _, n := range l.Notes {
			fmt.Fprintf(w, "   note: %s\n", n)
		}
		if p := l.Profile; p != nil {
			if p.Refused != "" {
				fmt.Fprintf(w, "   profile: none: %s\n", p.Refused)
			} else {
				fmt.Fprintf(w, "   profile: %d of %d samples in this code\n", p.InFunction, p.Samples)
			}
		}
		for _, ln := range l.Lines {
			fmt.Fprintf(w, "%s\n", textLine(l, ln))
		}
	}
}

// counts says a listing's size and marks in words: "120 bytes, 35 instructions, 2 calls
// (2 recursive), 1 back edge" (no recursive count when there is none).
func (l Listing) counts() string {
	s := ""
	if l.Bytes > 0 {
		s = plural(l.Bytes, "byte") + ", "
	}
	s += plural(l.Instructions, "instruction") + ", " + plural(l.Calls, "call")
	if l.RecursiveCalls > 0 {
		s += fmt.Sprintf(" (%d recursive)", l.RecursiveCalls)
	}
	return s + ", " + plural(l.BackEdges, "back edge")
}

// plural is n and the noun, in the plural unless n is 1 ("entry", "entries").
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if stem, ok := strings.CutSuffix(noun, "ry"); ok {
		return fmt.Sprintf("%d %sries", n, stem)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// WriteSummary writes Summarize's table: every tier's listings in words, and the tiers
// that were not explained with why.
func WriteSummary(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "\nSummary of %s:\n", rep.Label)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  tier\tform\tinstructions\tin words")
	for _, r := range Summarize(rep) {
		if r.Form == "" {
			fmt.Fprintf(tw, "  %s\t-\t-\t%s\n", r.Engine, r.Words)
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\n", r.Engine, r.Tier, r.Instructions, r.Words)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nThe terms (back edge, tier, trace, OSR, jump table): docs/KERNELS.md § Glossary of explain's terms")
}

func textLine(l Listing, ln Line) string {
	var marks []string
	if ln.SourceLine > 0 {
		marks = append(marks, fmt.Sprintf("%s:%d", path.Base(ln.SourceFile), ln.SourceLine))
	}
	if ln.LoopHead {
		marks = append(marks, "loop head")
	}
	switch {
	case ln.Recursive:
		marks = append(marks, "◀ recursive call")
	case ln.Call:
		marks = append(marks, "call")
	}
	if ln.BackEdge {
		marks = append(marks, fmt.Sprintf("↑ back edge to %s", offsetText(l, ln.Target)))
	}
	if ln.Note != "" {
		marks = append(marks, ln.Note)
	}
	heat := ""
	if l.Profile != nil && l.Profile.InFunction > 0 {
		heat = fmt.Sprintf("%5.1f%% ", 100*float64(ln.Samples)/float64(l.Profile.InFunction))
	}
	text := ln.Text
	if l.Kind == KindSource {
		text = strings.ReplaceAll(text, "\t", "    ")
	}
	s := fmt.Sprintf("  %s%6s  %-22s %s", heat, offsetText(l, ln.Offset), ln.Hex, text)
	if len(marks) > 0 {
		s += "   ; " + strings.Join(marks, "; ")
	}
	return s
}

func offsetText(l Listing, off int) string {
	if l.Kind != KindMachine && l.Kind != KindWasm { // a line, or an interpreter's own numbering
		return fmt.Sprintf("%d", off)
	}
	return fmt.Sprintf("+%#x", off)
}
