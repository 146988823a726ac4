package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/internal/warmup"
)

// What `wasmgap results list --kind` lists.
const (
	listAll     = "all"
	listRuns    = "runs"
	listStudies = "studies"
)

var listKinds = []string{listAll, listRuns, listStudies}

// studyFormats are the formats of `wasmgap results show --study`: wasmgap warmup's.
var studyFormats = []string{warmupText, warmupJSON, warmupMarkdown}

// writeStudyList writes the table of stored warm-up studies.
func writeStudyList(w io.Writer, studies []results.StudySummary) int {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "study\tstored (UTC)\tsource\twasmgap\tkernel\tengines\texecutions\tstatus")
	for _, st := range studies {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", st.ID, st.Created.Format("2006-01-02 15:04:05"), st.Source, st.Wasmgap,
			st.Label, strings.Join(st.Engines, ", "), st.Executions, st.Status)
	}
	return boolCode(tw.Flush() == nil)
}

// studyRows are the stored warm-up studies as rows of `wasmgap results list --format csv`:
// the kernel and engines in cells, the status in partial unless complete.
func studyRows(studies []results.StudySummary) [][]string {
	var rows [][]string
	for _, st := range studies {
		status := ""
		if st.Status != "complete" {
			status = st.Status
		}
		cells := fmt.Sprintf("%s on %s; %d executions", st.Label, strings.Join(st.Engines, ", "), st.Executions)
		rows = append(rows, []string{strconv.FormatInt(st.ID, 10), st.Created.Format(time.RFC3339), st.Source, st.Wasmgap, "", "", "", "", status, cells, st.Kind})
	}
	return rows
}

// studyIDs reads warm-up study ids from arguments.
func studyIDs(cmd string, args []string, stderr io.Writer) ([]int64, bool) {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "%s: --study: give the ids of warm-up studies (`wasmgap results list --kind studies` shows them)\n", cmd)
		return nil, false
	}
	return parseIDs(cmd, "study", "wasmgap results list --kind studies", args, stderr)
}

// showStudy prints the stored warm-up study args names, as wasmgap warmup printed it.
func showStudy(db, format string, args []string, stdout, stderr io.Writer) int {
	const cmd = "wasmgap results show"
	if !slices.Contains(studyFormats, format) {
		return exitf(stderr, 2, "%s: --study: unknown format %q: valid formats are %s", cmd, format, strings.Join(studyFormats, ", "))
	}
	ids, ok := studyIDs(cmd, args, stderr)
	if !ok {
		return 2
	}
	if len(ids) != 1 {
		return exitf(stderr, 2, "%s: --study: give one study id (%d given)", cmd, len(ids))
	}
	store, ok := openResults(cmd, db, stderr)
	if !ok {
		return 1
	}
	defer store.Close()
	ctx := context.Background()
	st, err := store.Study(ctx, ids[0])
	if errors.Is(err, results.ErrStudyNotFound) {
		return exitf(stderr, 2, "%s: %v: %s", cmd, err, store.StudyHint(ctx))
	}
	if err != nil {
		return exitf(stderr, 1, "%s: %v", cmd, err)
	}
	switch format {
	case warmupJSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", " ")
		err = enc.Encode(st)
	case warmupMarkdown:
		err = warmup.WriteMarkdown(stdout, []warmup.Report{st.Report})
	default:
		fmt.Fprintf(stdout, "warm-up study %d, stored %s, measured by %s, wasmgap %s\n\n", st.ID, st.Created.Format(time.RFC3339), st.Source, st.Wasmgap)
		err = warmup.WriteText(stdout, st.Report)
	}
	if err != nil {
		return exitf(stderr, 1, "%s: %v", cmd, err)
	}
	return 0
}

// deleteStudies removes the warm-up studies named by fs's arguments; a run filter beside
// --study is refused.
func deleteStudies(fs *flag.FlagSet, db string, stdout, stderr io.Writer) int {
	const cmd = "wasmgap results delete"
	var filters []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "study" && f.Name != "results-db" {
			filters = append(filters, "--"+f.Name)
		}
	})
	if len(filters) > 0 {
		return exitf(stderr, 2, "%s: --study takes study ids only, not %s: `wasmgap results list --kind studies` with filters shows the ids", cmd, strings.Join(filters, ", "))
	}
	ids, ok := studyIDs(cmd, fs.Args(), stderr)
	if !ok {
		return 2
	}
	store, ok := openResults(cmd, db, stderr)
	if !ok {
		return 1
	}
	defer store.Close()
	n, err := store.DeleteStudies(context.Background(), ids)
	if err != nil {
		return exitf(stderr, 2, "%s: %v", cmd, err)
	}
	fmt.Fprintf(stdout, "deleted %d warm-up study(ies)\n", n)
	return 0
}
