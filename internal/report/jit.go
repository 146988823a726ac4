package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/measure"
)

// The JIT on / off view's formats: for each runtime with an interpreter and a JIT (a pair
// of registered engines, engine.Info's Runtime and Tier), each kernel's time on both and
// the ratio, interpreter over JIT.
const (
	FormatJIT         = "jit"
	FormatJITMarkdown = "jit-markdown"
	FormatJITJSON     = "jit-json"
	FormatJITCSV      = "jit-csv"
)

// JITPair is one runtime's two tiers, as engines.
type JITPair struct {
	Runtime     string `json:"runtime"`
	Interpreter string `json:"interpreter"`
	JIT         string `json:"jit"`
}

// JITPairs returns the pairs among the registered engines, in the JIT engines' rank order.
func JITPairs() []JITPair {
	infos := engine.Infos()
	var pairs []JITPair
	for _, j := range infos {
		if j.Tier != engine.TierJIT || j.Runtime == "" {
			continue
		}
		for _, i := range infos {
			if i.Tier == engine.TierInterpreter && i.Runtime == j.Runtime {
				pairs = append(pairs, JITPair{Runtime: j.Runtime, Interpreter: i.Name, JIT: j.Name})
				break
			}
		}
	}
	return pairs
}

// JITRow is one kernel on one runtime's two tiers. A tier that failed or did not run has
// no time and says why; Ratio is set when both have a time.
type JITRow struct {
	Kernel string `json:"kernel"`
	JITPair
	InterpreterNs      float64 `json:"interpreter_ns,omitempty"`
	JITNs              float64 `json:"jit_ns,omitempty"`
	InterpreterFailure string  `json:"interpreter_failure,omitempty"`
	JITFailure         string  `json:"jit_failure,omitempty"`
	// Ratio is the interpreter's median over the JIT's: what the JIT buys.
	Ratio float64 `json:"ratio,omitempty"`
}

// JITView arranges results as the JIT on / off view: a row per kernel (with its
// arguments) and pair of which at least one tier ran, in the results' kernel order.
func JITView(results []measure.Result, pairs []JITPair) []JITRow {
	type key struct{ label, engine string }
	byCell := map[key]measure.Result{}
	var labels []string
	for _, r := range results {
		l := r.Label()
		if _, ok := byCell[key{l, r.Engine}]; !ok {
			byCell[key{l, r.Engine}] = r
		}
		if !containsString(labels, l) {
			labels = append(labels, l)
		}
	}
	var rows []JITRow
	for _, l := range labels {
		for _, p := range pairs {
			i, iok := byCell[key{l, p.Interpreter}]
			j, jok := byCell[key{l, p.JIT}]
			if !iok && !jok {
				continue
			}
			row := JITRow{Kernel: l, JITPair: p}
			row.InterpreterNs, row.InterpreterFailure = tierTime(i, iok)
			row.JITNs, row.JITFailure = tierTime(j, jok)
			if row.InterpreterNs > 0 && row.JITNs > 0 {
				row.Ratio = row.InterpreterNs / row.JITNs
			}
			rows = append(rows, row)
		}
	}
	return rows
}

func tierTime(r measure.Result, ok bool) (float64, string) {
	switch {
	case !ok:
		return 0, "not run"
	case r.Failed():
		return 0, r.Failure
	}
	return r.Median, ""
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writeJIT writes the JIT on / off view of r in one of the JIT formats.
func writeJIT(w io.Writer, format string, r Report) error {
	rows := JITView(r.Results, JITPairs())
	switch format {
	case FormatJITJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Method      Method      `json:"method"`
			Environment Environment `json:"environment"`
			Rows        []JITRow    `json:"jit"`
		}{r.Method, r.Environment, rows})
	case FormatJITCSV:
		cw := csv.NewWriter(w)
		cw.Write([]string{"kernel", "runtime", "interpreter", "jit", "interpreter_ns", "jit_ns", "ratio", "interpreter_failure", "jit_failure"})
		for _, row := range rows {
			cw.Write([]string{row.Kernel, row.Runtime, row.Interpreter, row.JIT, nsField(row.InterpreterNs), nsField(row.JITNs),
				nsField(row.Ratio), row.InterpreterFailure, row.JITFailure})
		}
		cw.Flush()
		return cw.Error()
	case FormatJITMarkdown:
		fmt.Fprintln(w, "| kernel | runtime | interpreter | time | JIT | time | interpreter / JIT |")
		fmt.Fprintln(w, "| --- | --- | --- | ---: | --- | ---: | ---: |")
		for _, row := range rows {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", row.Kernel, row.Runtime, row.Interpreter, jitCell(row.InterpreterNs, row.InterpreterFailure),
				row.JIT, jitCell(row.JITNs, row.JITFailure), ratioCell(row.Ratio))
		}
		fmt.Fprintf(w, "\n%s\n", r.Environment.line())
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kernel\truntime\tinterpreter\ttime\tJIT\ttime\tinterp/JIT\t")
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.Kernel, row.Runtime, row.Interpreter, jitCell(row.InterpreterNs, row.InterpreterFailure),
			row.JIT, jitCell(row.JITNs, row.JITFailure), ratioCell(row.Ratio))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, r.Environment.line())
	return err
}

func nsField(v float64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func jitCell(ns float64, failure string) string {
	if failure != "" {
		return strings.ReplaceAll(failure, "|", "/")
	}
	return FormatNs(ns)
}

func ratioCell(x float64) string {
	if x == 0 {
		return "—"
	}
	return FormatRatio(x)
}
