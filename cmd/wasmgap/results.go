package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
)

// resultsDBEnv names the environment variable that sets the store when --results-db
// does not.
const resultsDBEnv = "WASMGAP_RESULTS_DB"

// resultsDBUsage is the help of every --results-db flag.
const resultsDBUsage = "the results store: an SQLite file, or a postgres:// address (default $" + resultsDBEnv + ", else " + results.DefaultPath + ")"

// resultsDSN is the store a command uses: the flag, else $WASMGAP_RESULTS_DB, else the
// data folder's file. Inside `go test` there is no default: a test names its store (in
// t.TempDir) or stores nothing, so that tests never write into a shared place.
func resultsDSN(flagValue string) (dsn string, ok bool) {
	switch {
	case flagValue != "":
		return flagValue, true
	case os.Getenv(resultsDBEnv) != "":
		return os.Getenv(resultsDBEnv), true
	case testing.Testing():
		return "", false
	}
	return results.DefaultPath, true
}

// benchResults are bench's flags for the store: --no-save, --results-db,
// --results-max-bytes, --compare-last.
type benchResults struct {
	noSave, compareLast *bool
	db                  *string
	maxBytes            *int64
}

func addBenchResultFlags(fs *flag.FlagSet) *benchResults {
	return &benchResults{
		noSave:      fs.Bool("no-save", false, "do not store this run in the results store"),
		db:          fs.String("results-db", "", resultsDBUsage),
		maxBytes:    fs.Int64("results-max-bytes", 0, resultsMaxBytesUsage),
		compareLast: fs.Bool("compare-last", false, "compare this run with the last stored run of the same cells on this machine, printed as wasmgap compare prints it"),
	}
}

// after stores a finished bench run and, with --compare-last, compares it with the
// last stored run of its plan on this machine. The comparison goes to stdout after a
// table or Markdown report, to stderr after JSON or gobench (which stdout must keep
// whole).
func (b *benchResults) after(rep report.Report, format string, stdout, stderr io.Writer) int {
	if *b.noSave && !*b.compareLast {
		return 0
	}
	dsn, ok := resultsDSN(*b.db)
	if !ok {
		if *b.compareLast {
			return exitf(stderr, 2, "wasmgap bench: --compare-last: no results store under go test: give --results-db")
		}
		return 0
	}
	ctx := context.Background()
	store, err := openLimited(ctx, dsn, *b.maxBytes)
	if err != nil {
		return exitf(stderr, 1, "wasmgap bench: %v", err)
	}
	defer store.Close()
	run := results.NewRun(results.SourceCLI, rep)
	if *b.compareLast {
		w := stdout
		if format != report.FormatTable && format != report.FormatMarkdown {
			w, format = stderr, report.FormatTable
		}
		last, err := store.Last(ctx, results.SourceCLI, run.Plan, run.Machine)
		switch {
		case errors.Is(err, results.ErrNotFound):
			fmt.Fprintf(stderr, "wasmgap bench: --compare-last: no earlier run of these cells on this machine in %s: nothing to compare yet\n", dsn)
		case err != nil:
			return exitf(stderr, 1, "wasmgap bench: %v", err)
		default:
			fmt.Fprintln(w)
			if code := writeRunComparison(w, stderr, "wasmgap bench", format, report.Alpha, last, run); code != 0 {
				return code
			}
		}
	}
	if *b.noSave {
		return 0
	}
	return saveRun(store, dsn, run, stderr)
}

// saveRun stores a bench run, all its cells in one run, and says where.
func saveRun(store *results.Store, dsn string, run results.Run, stderr io.Writer) int {
	id, err := store.Save(context.Background(), run)
	if err != nil {
		fmt.Fprintln(stderr, "wasmgap bench:", err)
		if errors.Is(err, results.ErrFull) {
			fmt.Fprintf(stderr, "wasmgap bench: the report above was not stored in %s: its limit is --results-max-bytes (default %d MiB); --no-save runs without storing\n", dsn, results.DefaultMaxBytes>>20)
		}
		return 1
	}
	what := "run"
	if run.Report.Method.Partial != "" {
		what = "partial run"
	}
	fmt.Fprintf(stderr, "wasmgap bench: stored as %s %d in %s (wasmgap results show %d)\n", what, id, dsn, id)
	return 0
}

// save stores a bench run (unless --no-save) without comparing it: an interrupted run's
// cells, a part of their plan.
func (b *benchResults) save(rep report.Report, stderr io.Writer) int {
	dsn, ok := resultsDSN(*b.db)
	if *b.noSave || !ok {
		return 0
	}
	store, err := results.Open(context.Background(), dsn)
	if err != nil {
		return exitf(stderr, 1, "wasmgap bench: %v", err)
	}
	defer store.Close()
	return saveRun(store, dsn, results.NewRun(results.SourceCLI, rep), stderr)
}

// dsn is the store bench reads its forecast from: "" when there is none to read (under go
// test without --results-db, or no file yet).
func (b *benchResults) dsn() string {
	dsn, ok := resultsDSN(*b.db)
	if !ok {
		return ""
	}
	if !results.IsPostgres(dsn) {
		if _, err := os.Stat(dsn); err != nil {
			return ""
		}
	}
	return dsn
}

// runName names a stored run in a comparison's columns: "run 12 (2026-12-02 07:30)".
func runName(r results.Run) string {
	if r.ID == 0 {
		return "this run"
	}
	return fmt.Sprintf("run %d (%s)", r.ID, r.Created.Format("2006-01-02 15:04"))
}

func writeRunComparison(stdout, stderr io.Writer, cmd, format string, alpha float64, old, new results.Run) int {
	c, err := report.CompareWith(old.Report, new.Report, report.CompareOptions{Alpha: alpha})
	if err != nil {
		return exitf(stderr, 2, "%s: %v", cmd, err)
	}
	if err := report.WriteComparison(stdout, format, c, runName(old), runName(new), old.Report, new.Report); err != nil {
		return exitf(stderr, 1, "%s: write: %v", cmd, err)
	}
	return 0
}

// resultsCommands are the subcommands of `wasmgap results`.
var resultsCommands = map[string]func(args []string, stdout, stderr io.Writer) int{
	"list":     resultsList,
	"show":     resultsShow,
	"compare":  resultsCompare,
	"export":   resultsExport,
	"delete":   resultsDelete,
	"machines": resultsMachines,
}

func runResults(args []string, stdout, stderr io.Writer) int {
	const usage = `usage: wasmgap results <list|show|compare|export|delete|machines> [flags]

  list [filters]            the stored runs and warm-up studies, newest first
  show ID | --study ID      one run's report, with where it ran, or a warm-up study
  compare OLD NEW           two stored runs cell by cell, as wasmgap compare
  export ID                 one run as the JSON that wasmgap compare reads
  delete ID... | [filters]  remove runs and their samples (--study ID...: warm-up studies)
  machines [ID ID...]       runs of one plan on several machines side by side (a farm's)

Run 'wasmgap results <command> -h' for its flags.`
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprintln(stdout, usage)
		return 0
	case "help":
		if sub, ok := resultsCommands[args[min(1, len(args)-1)]]; ok && len(args) > 1 {
			return sub([]string{"-h"}, stdout, stderr)
		}
		fmt.Fprintln(stdout, usage)
		return 0
	}
	sub, ok := resultsCommands[args[0]]
	if !ok {
		return exitf(stderr, 2, "wasmgap results: unknown command %q\n\n%s", args[0], usage)
	}
	return sub(args[1:], stdout, stderr)
}

// filterFlags are the flags that select stored runs.
type filterFlags struct {
	db                                                          *string
	source, kernel, args, engine, version, browser, os, wasmgap *string
	cores, limit                                                *int
	since, until                                                *string
}

func addFilterFlags(fs *flag.FlagSet, withLimit bool) *filterFlags {
	f := &filterFlags{
		db:      fs.String("results-db", "", resultsDBUsage),
		source:  fs.String("source", "", "runs measured by: cli, server or browser"),
		kernel:  fs.String("kernel", "", "runs with a cell of this kernel"),
		args:    fs.String("args", "", "with --kernel: its arguments as stored, comma-separated (\"30\", \"50000,1000\")"),
		engine:  fs.String("engine", "", "runs with a cell on this engine"),
		version: fs.String("engine-version", "", "runs with a cell whose engine had this version (\"go1.26.4\", \"wazero v1.12.0\")"),
		browser: fs.String("browser", "", "runs shared by this browser (\"Chrome\")"),
		os:      fs.String("os", "", "runs on this OS (\"linux\")"),
		wasmgap: fs.String("wasmgap", "", "runs measured by this version of wasmgap"),
		cores:   fs.Int("cores", 0, "runs on machines with this many cores"),
		since:   fs.String("since", "", "runs stored at or after this time (2026-12-01 or RFC 3339)"),
		until:   fs.String("until", "", "runs stored before this time (2026-12-01 or RFC 3339)"),
	}
	if withLimit {
		f.limit = fs.Int("limit", 20, "list at most this many runs")
	}
	return f
}

func parseTime(flagName, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--%s %q: give a date (2026-12-01) or an RFC 3339 time (2026-12-01T07:30:00Z)", flagName, s)
}

func (f *filterFlags) filter() (results.Filter, error) {
	flt := results.Filter{
		Source: *f.source, Kernel: *f.kernel, Args: *f.args, Engine: *f.engine, EngineVersion: *f.version,
		Browser: *f.browser, OS: *f.os, Wasmgap: *f.wasmgap, Cores: *f.cores,
	}
	switch flt.Source {
	case "", results.SourceCLI, results.SourceServer, results.SourceBrowser:
	default:
		return flt, fmt.Errorf("--source %q: runs come from cli, server or browser", flt.Source)
	}
	if flt.Args != "" && flt.Kernel == "" {
		return flt, errors.New("--args needs --kernel: arguments belong to a kernel")
	}
	if flt.Cores < 0 {
		return flt, fmt.Errorf("--cores %d: give a positive number of cores", flt.Cores)
	}
	var err error
	if flt.Since, err = parseTime("since", *f.since); err != nil {
		return flt, err
	}
	if flt.Until, err = parseTime("until", *f.until); err != nil {
		return flt, err
	}
	if f.limit != nil {
		if *f.limit < 1 {
			return flt, fmt.Errorf("--limit %d: list at least one run", *f.limit)
		}
		flt.Limit = *f.limit
	}
	return flt, nil
}

// openResults opens the store a results subcommand names.
func openResults(cmd, flagValue string, stderr io.Writer) (*results.Store, bool) {
	dsn, ok := resultsDSN(flagValue)
	if !ok {
		fmt.Fprintf(stderr, "%s: no results store under go test: give --results-db\n", cmd)
		return nil, false
	}
	if !results.IsPostgres(dsn) {
		if _, err := os.Stat(dsn); errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(stderr, "%s: no results store at %s: `wasmgap bench` and `wasmgap serve` create it, or give --results-db\n", cmd, dsn)
			return nil, false
		}
	}
	s, err := results.Open(context.Background(), dsn)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return nil, false
	}
	return s, true
}

func resultsList(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap results list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ff := addFilterFlags(fs, true)
	format := fs.String("format", "table", "output format: table, csv or json")
	kind := fs.String("kind", listAll, "what to list: "+strings.Join(listKinds, ", "))
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmgap results list [--format F] [--kind K] [--limit N] [filters]\n\nLists the stored runs, newest first: their ids (for show, compare, export, delete), when and\nwhere they ran, and their cells. A run stopped by Ctrl-C or SIGTERM is marked partial.\nThen the stored warm-up studies (wasmgap warmup, the page's Warm-up view), newest first:\ntheir ids (for show --study, delete --study), kernel, engines, executions and status.\nThe filters a study does not record (--browser, --os, --cores, --engine-version) select no\nstudy; --limit applies to runs and to studies each.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return exitf(stderr, 2, "wasmgap results list: unexpected arguments %q: list takes flags only", fs.Args())
	}
	if *format != "table" && *format != "json" && *format != "csv" {
		return exitf(stderr, 2, "wasmgap results list: unknown format %q: valid formats are table, csv, json", *format)
	}
	if !slices.Contains(listKinds, *kind) {
		return exitf(stderr, 2, "wasmgap results list: --kind %q: allowed %s", *kind, strings.Join(listKinds, ", "))
	}
	flt, err := ff.filter()
	if err != nil {
		return exitf(stderr, 2, "wasmgap results list: %v", err)
	}
	store, ok := openResults("wasmgap results list", *ff.db, stderr)
	if !ok {
		return 1
	}
	defer store.Close()
	var list []results.Summary
	if *kind != listStudies {
		if list, err = store.List(context.Background(), flt); err != nil {
			return exitf(stderr, 1, "wasmgap results list: %v", err)
		}
	}
	var studies []results.StudySummary
	if *kind != listRuns {
		if studies, err = store.ListStudies(context.Background(), flt); err != nil {
			return exitf(stderr, 1, "wasmgap results list: %v", err)
		}
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		all := []any{}
		for _, r := range list {
			all = append(all, r)
		}
		for _, st := range studies {
			all = append(all, st)
		}
		return boolCode(enc.Encode(all) == nil)
	}
	if *format == "csv" {
		var rows [][]string
		for _, r := range list {
			rows = append(rows, []string{strconv.FormatInt(r.ID, 10), r.Created.Format(time.RFC3339), r.Source, r.Wasmgap, r.CPU, strconv.Itoa(r.Cores), r.OS, r.Browser, r.Partial, strings.Join(r.Cells, "; "), r.Kind})
		}
		rows = append(rows, studyRows(studies)...)
		return boolCode(report.WriteCSV(stdout, []string{"id", "stored", "source", "wasmgap", "cpu", "cores", "os", "browser", "partial", "cells", "kind"}, rows) == nil)
	}
	if len(list) == 0 && len(studies) == 0 {
		fmt.Fprintf(stderr, "wasmgap results list: no stored %s matches\n", map[string]string{listAll: "run or warm-up study", listRuns: "run", listStudies: "warm-up study"}[*kind])
		return 0
	}
	code := 0
	if len(list) > 0 {
		code = writeRunList(stdout, list)
	}
	if len(studies) > 0 {
		if len(list) > 0 {
			fmt.Fprintln(stdout)
		}
		code = max(code, writeStudyList(stdout, studies))
	}
	return code
}

// writeRunList writes the table of stored runs.
func writeRunList(stdout io.Writer, list []results.Summary) int {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "run\tstored (UTC)\tsource\twasmgap\tmachine\tcells")
	for _, r := range list {
		machine := fmt.Sprintf("%s, %d cores, %s", r.CPU, r.Cores, r.OS)
		if r.Browser != "" {
			machine = r.Browser + ", " + machine
		}
		if r.MachineName != "" {
			machine = r.MachineName + ": " + machine
		}
		cells := summarizeCells(r.Cells)
		if r.Partial != "" {
			cells = "partial (" + r.Partial + "): " + cells
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Created.Format("2006-01-02 15:04:05"), r.Source, r.Wasmgap, machine, cells)
	}
	return boolCode(tw.Flush() == nil)
}

func summarizeCells(cells []string) string {
	if len(cells) > 3 {
		return strings.Join(cells[:3], "; ") + fmt.Sprintf("; and %d more", len(cells)-3)
	}
	return strings.Join(cells, "; ")
}

func boolCode(ok bool) int {
	if ok {
		return 0
	}
	return 1
}

// runIDs reads run ids from arguments.
func runIDs(cmd string, args []string, stderr io.Writer) ([]int64, bool) {
	return parseIDs(cmd, "run", "wasmgap results list", args, stderr)
}

// parseIDs reads the ids of stored things of a kind ("run", "study") from arguments; an
// argument that is none says which command lists them.
func parseIDs(cmd, kind, lister string, args []string, stderr io.Writer) ([]int64, bool) {
	var ids []int64
	for _, a := range args {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			fmt.Fprintf(stderr, "%s: %q is not a %s id: ids are the positive numbers `%s` shows\n", cmd, a, kind, lister)
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// getRuns reads the runs named by ids from the store named by db.
func getRuns(cmd, db string, args []string, want int, stderr io.Writer) ([]results.Run, bool) {
	if len(args) != want {
		fmt.Fprintf(stderr, "%s: give %d run id(s) (%d given): `wasmgap results list` shows them\n", cmd, want, len(args))
		return nil, false
	}
	ids, ok := runIDs(cmd, args, stderr)
	if !ok {
		return nil, false
	}
	store, ok := openResults(cmd, db, stderr)
	if !ok {
		return nil, false
	}
	defer store.Close()
	var runs []results.Run
	for _, id := range ids {
		r, err := store.Get(context.Background(), id)
		if errors.Is(err, results.ErrNotFound) {
			fmt.Fprintf(stderr, "%s: %v; a warm-up study's id is shown by `wasmgap results show --study ID`\n", cmd, err)
			return nil, false
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
			return nil, false
		}
		runs = append(runs, r)
	}
	return runs, true
}

func resultsShow(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap results show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("results-db", "", resultsDBUsage)
	format := fs.String("format", report.FormatTable, "output format: "+strings.Join(report.Formats(), ", ")+"; with --study: "+strings.Join(studyFormats, ", "))
	study := fs.Bool("study", false, "ID is a warm-up study's (wasmgap results list shows both kinds)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmgap results show [--format F] [--results-db DB] [--study] ID\n\nPrints a stored run's report, as wasmgap bench printed it, with where it ran; with --study,\na stored warm-up study as wasmgap warmup printed it.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *study {
		return showStudy(*db, *format, fs.Args(), stdout, stderr)
	}
	runs, ok := getRuns("wasmgap results show", *db, fs.Args(), 1, stderr)
	if !ok {
		return 2
	}
	r := runs[0]
	if *format == report.FormatTable || *format == report.FormatMarkdown {
		line := fmt.Sprintf("run %d, stored %s, measured by %s, wasmgap %s", r.ID, r.Created.Format(time.RFC3339), r.Source, r.Wasmgap)
		if r.MachineName != "" {
			line += ", on machine " + r.MachineName
		}
		if r.Source == results.SourceBrowser {
			b := r.Browser
			line += fmt.Sprintf(" (the browser's word: %s %s, %d hardware threads, cross-origin isolated %v, timer resolution %s; user agent %q)",
				b.Name, b.Version, b.HardwareConcurrency, b.CrossOriginIsolated, report.FormatNs(b.TimerResolutionNS), b.UserAgent)
		}
		fmt.Fprintln(stdout, line)
		fmt.Fprintln(stdout)
	}
	if err := report.Write(stdout, *format, r.Report); err != nil {
		return exitf(stderr, 2, "wasmgap results show: %v", err)
	}
	return 0
}

func resultsExport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap results export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("results-db", "", resultsDBUsage)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmgap results export [--results-db DB] ID > run.json\n\nWrites a stored run as `wasmgap bench --format json` writes it, the JSON `wasmgap compare` reads.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	runs, ok := getRuns("wasmgap results export", *db, fs.Args(), 1, stderr)
	if !ok {
		return 2
	}
	return boolCode(report.Write(stdout, report.FormatJSON, runs[0].Report) == nil)
}

func resultsCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap results compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("results-db", "", resultsDBUsage)
	format := fs.String("format", report.FormatTable, "output format: "+strings.Join(report.ComparisonFormats(), ", "))
	alpha := fs.Float64("alpha", report.Alpha, "significance level of the Mann–Whitney U test (benchstat's default)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmgap results compare [--format F] [--alpha A] [--results-db DB] OLD NEW\n\nCompares two stored runs cell by cell, as wasmgap compare compares two JSON reports.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if !(*alpha > 0 && *alpha < 1) {
		return exitf(stderr, 2, "wasmgap results compare: --alpha %v is out of range: a significance level lies between 0 and 1 (default %v)", *alpha, report.Alpha)
	}
	if !slices.Contains(report.ComparisonFormats(), *format) {
		return exitf(stderr, 2, "wasmgap results compare: unknown format %q: valid formats are %s", *format, strings.Join(report.ComparisonFormats(), ", "))
	}
	runs, ok := getRuns("wasmgap results compare", *db, fs.Args(), 2, stderr)
	if !ok {
		return 2
	}
	return writeRunComparison(stdout, stderr, "wasmgap results compare", *format, *alpha, runs[0], runs[1])
}

func resultsDelete(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap results delete", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ff := addFilterFlags(fs, false)
	study := fs.Bool("study", false, "the ids are warm-up studies' (no filters then)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmgap results delete [--results-db DB] ID... | [filters]\n       wasmgap results delete [--results-db DB] --study ID...\n\nRemoves runs with their cells and samples. Give run ids, or filters (--source browser --until 2026-12-01); with both, the runs both select.\nWith --study, removes the warm-up studies with these ids.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *study {
		return deleteStudies(fs, *ff.db, stdout, stderr)
	}
	flt, err := ff.filter()
	if err != nil {
		return exitf(stderr, 2, "wasmgap results delete: %v", err)
	}
	ids, ok := runIDs("wasmgap results delete", fs.Args(), stderr)
	if !ok {
		return 2
	}
	flt.IDs = ids
	store, ok := openResults("wasmgap results delete", *ff.db, stderr)
	if !ok {
		return 1
	}
	defer store.Close()
	n, err := store.Delete(context.Background(), flt)
	if err != nil {
		return exitf(stderr, 2, "wasmgap results delete: %v", err)
	}
	fmt.Fprintf(stdout, "deleted %d run(s)\n", n)
	return 0
}

// serveResults opens the store `wasmgap serve` keeps the page's runs in: nil without one
// (--results-db none, or go test without --results-db).
func serveResults(flagValue string, maxBytes int64, stderr io.Writer) (*results.Store, bool) {
	if flagValue == "none" {
		return nil, true
	}
	dsn, ok := resultsDSN(flagValue)
	if !ok {
		return nil, true
	}
	s, err := openLimited(context.Background(), dsn, maxBytes)
	if err != nil {
		fmt.Fprintln(stderr, "wasmgap serve:", err)
		return nil, false
	}
	return s, true
}

// resultsMaxBytesUsage is the help of every --results-max-bytes flag.
var resultsMaxBytesUsage = fmt.Sprintf("the data the results store may hold, in bytes; past it a run is not stored (the share route answers 507) and nothing stored is lost (0: the default, %d MiB)", results.DefaultMaxBytes>>20)

// openLimited opens the store at dsn with its byte limit (0: the default).
func openLimited(ctx context.Context, dsn string, maxBytes int64) (*results.Store, error) {
	if maxBytes < 0 {
		return nil, fmt.Errorf("--results-max-bytes %d: allowed 0 (the default, %d MiB) or a number of bytes", maxBytes, results.DefaultMaxBytes>>20)
	}
	s, err := results.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	s.SetMaxBytes(maxBytes)
	return s, nil
}
