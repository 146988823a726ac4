package explain

import (
	"fmt"
	"regexp"
	"strings"
)

// SummaryRow is one tier's listing in words, as the end of `wasmgap explain`'s text and the
// top of the page's Code view say it.
type SummaryRow struct {
	// Engine and Tier name the listing; Form is its kind, "" for an engine that was not
	// explained (Words then says why).
	Engine string `json:"engine"`
	Tier   string `json:"tier,omitempty"`
	Form   string `json:"form,omitempty"`
	// Instructions is the listing's count.
	Instructions int `json:"instructions"`
	// Words says what the listing holds: its size against the baseline's machine code,
	// its calls of itself, its loops, and what the code spends instructions on (stack
	// checks, bounds checks, jump tables, indirect jumps, stack stores).
	Words string `json:"words"`
}

// Summarize says every listing of rep in words, each machine code measured against the
// report's first machine code (the baseline's, in report order) when it is another tier's.
func Summarize(rep *Report) []SummaryRow {
	var base *Listing
	for i := range rep.Engines {
		for j := range rep.Engines[i].Listings {
			if l := &rep.Engines[i].Listings[j]; base == nil && l.Kind == KindMachine {
				base = l
			}
		}
	}
	var rows []SummaryRow
	for _, e := range rep.Engines {
		if e.Refused != "" {
			rows = append(rows, SummaryRow{Engine: e.Engine, Words: "not explained: " + strings.TrimPrefix(firstLineOf(e.Refused), ": ")})
			continue
		}
		for _, l := range e.Listings {
			rows = append(rows, SummaryRow{Engine: e.Engine, Tier: l.Tier, Form: l.Kind, Instructions: l.Instructions, Words: l.inWords(base)})
		}
	}
	return rows
}

// inWords says what a listing is beside the baseline's: "548 instructions against
// native's 35 (15.7×); calls itself at 2 places; 1 back edge; a jump table of 9 entries".
func (l *Listing) inWords(base *Listing) string {
	var parts []string
	switch {
	case l.Kind == KindMachine && base != nil && (base.Engine != l.Engine || base.Tier != l.Tier) && base.Instructions > 0:
		parts = append(parts, fmt.Sprintf("%s against %s's %d (%.1f×)", plural(l.Instructions, "instruction"), base.Engine, base.Instructions,
			float64(l.Instructions)/float64(base.Instructions)))
	case l.Kind == KindBytecode:
		parts = append(parts, "no machine code: an interpreter runs these "+plural(l.Instructions, "instruction")+", one dispatch each")
	case l.Kind == KindSource:
		parts = append(parts, "the source every Go tier compiles, "+plural(l.Instructions, "line"))
	default:
		parts = append(parts, l.Kind+", "+plural(l.Instructions, "instruction"))
	}
	switch l.RecursiveCalls {
	case 0:
	case 1:
		parts = append(parts, "calls itself at 1 place")
	default:
		parts = append(parts, fmt.Sprintf("calls itself at %d places", l.RecursiveCalls))
	}
	if n := l.Calls - l.RecursiveCalls; n > 0 {
		parts = append(parts, plural(n, "other call"))
	}
	if l.BackEdges > 0 {
		parts = append(parts, plural(l.BackEdges, "back edge"))
	}
	if l.Kind == KindMachine {
		parts = append(parts, l.spending()...)
	}
	if l.OpsPerCall > 0 {
		parts = append(parts, fmt.Sprintf("%.1f dispatches a call", l.OpsPerCall))
	}
	return strings.Join(parts, "; ")
}

// stackStore is a store to the stack frame: a spilled register or an argument written
// for a call (x86's mov to [rsp+…] or [rbp-…], arm64's str/stp to [sp…] or [x29…]).
var stackStore = regexp.MustCompile(`^(mov\w* \w+ ptr \[r[sb]p[^\]]*\], |st(r|p|ur)\w* [^\[]*\[(sp|x29)\b)`)

// spending says what a machine listing's instructions go to beyond the kernel's own
// arithmetic, from its lines: stack-growth checks and bounds checks (calls of the
// runtime's morestack and panic functions, where the tier names its calls' targets), jump
// table entries (wazero's br_table, the dispatch of Go's resumable wasm calls), indirect
// jumps and calls, and stores to the stack frame.
func (l *Listing) spending() []string {
	var morestack, bounds, table, indirectJumps, indirectCalls, stores int
	for _, ln := range l.Lines {
		switch {
		case ln.Data && strings.HasPrefix(ln.Note, "jump table entry"):
			table++
			continue
		case ln.Data:
			continue
		}
		switch {
		case strings.Contains(ln.Note, "morestack"):
			morestack++
		case strings.Contains(ln.Note, "runtime.panicIndex"), strings.Contains(ln.Note, "runtime.panicBounds"),
			strings.Contains(ln.Note, "runtime.panicSlice"), strings.Contains(ln.Note, "runtime.goPanicIndex"):
			bounds++
		}
		op, arg, _ := strings.Cut(ln.Text, " ")
		indirect := arg != "" && !strings.HasPrefix(arg, "0x") && !strings.HasPrefix(arg, ".")
		switch {
		case op == "jmp" && indirect, op == "br":
			indirectJumps++
		case ln.Call && (op == "call" && indirect || op == "blr"):
			indirectCalls++
		}
		if stackStore.MatchString(ln.Text) {
			stores++
		}
	}
	var parts []string
	if morestack > 0 {
		parts = append(parts, plural(morestack, "stack-growth check"))
	}
	if bounds > 0 {
		parts = append(parts, plural(bounds, "bounds check"))
	}
	if table > 0 {
		parts = append(parts, fmt.Sprintf("a jump table of %s", plural(table, "entry")))
	}
	if indirectJumps > 0 {
		parts = append(parts, plural(indirectJumps, "indirect jump"))
	}
	if indirectCalls > 0 {
		parts = append(parts, plural(indirectCalls, "indirect call"))
	}
	if stores > 0 {
		parts = append(parts, plural(stores, "store")+" to the stack frame (spills, arguments)")
	}
	return parts
}
