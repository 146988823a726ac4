package explain

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes a report for a terminal: per engine, each listing's summary line, then
// its lines with their marks (call, recursive call, back edge, loop head) and samples.
func WriteText(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "%s on %s\n", rep.Label, rep.Arch)
	for _, e := range rep.Engines {
		if e.Refused != "" {
			fmt.Fprintf(w, "\n== %s: not explained: %s\n", e.Engine, e.Refused)
			continue
		}
		for _, l := range e.Listings {
			fmt.Fprintf(w, "\n== %s · %s · %s\n", e.Engine, l.Tier, l.Function)
			size := ""
			if l.Bytes > 0 {
				size = fmt.Sprintf("%d bytes, ", l.Bytes)
			}
			fmt.Fprintf(w, "   %s%d instructions, %d calls (%d recursive), %d back edges · %s\n",
				size, l.Instructions, l.Calls, l.RecursiveCalls, l.BackEdges, l.From)
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
}

func textLine(l Listing, ln Line) string {
	var marks []string
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
