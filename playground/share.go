package playground

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/httpguard"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/internal/runner"
)

// Limits of POST /api/results/share.
const (
	// maxShareBody bounds a submission's JSON.
	maxShareBody = 1 << 20
	// maxShareCells bounds its cells.
	maxShareCells = 64
	// maxSampleNS bounds one sample: an hour per call is no browser's measurement.
	maxSampleNS = 3.6e12
	// shareEvery and shareBurst are the rate of submissions per address.
	shareEvery = 10 * time.Second
	shareBurst = 10
	// maxShareAddresses bounds the addresses the rate limiter remembers.
	maxShareAddresses = 10_000
	// maxUserAgent bounds the user agent kept.
	maxUserAgent = 512
)

// browserEngines are the engines a page measures in the browser (engine.Page): the only
// ones a submission may name.
var browserEngines = engine.PageNames()

// shareRequest is the body of POST /api/results/share: what a browser measured and what
// it may tell of itself.
type shareRequest struct {
	Browser struct {
		UserAgent           string  `json:"user_agent"`
		HardwareConcurrency int     `json:"hardware_concurrency"`
		CrossOriginIsolated bool    `json:"cross_origin_isolated"`
		TimerResolutionNS   float64 `json:"timer_resolution_ns"`
	} `json:"browser"`
	Method struct {
		Runs        int     `json:"runs"`
		Warmup      int     `json:"warmup"`
		MinSampleNS float64 `json:"min_sample_ns"`
	} `json:"method"`
	Cells []sharedCell `json:"cells"`
	// Batch, when given, names the page's Run whose browser cells these are: they are
	// stored in that Run's run, beside its server cells (pagerun.go).
	Batch string `json:"batch,omitempty"`
}

// sharedCell is one browser cell as the page holds it (web/src/types.ts CellResult),
// the fields the server keeps.
type sharedCell struct {
	Kernel  string    `json:"kernel"`
	Args    []int     `json:"args"`
	Engine  string    `json:"engine"`
	Warmup  int       `json:"warmup"`
	Calls   int       `json:"calls"`
	Value   string    `json:"value"`
	Samples []float64 `json:"samples_ns"`
	FirstNS float64   `json:"first_ns"`
}

// shareAnswer is the answer of a stored submission.
type shareAnswer struct {
	Run   int64 `json:"run"`
	Cells int   `json:"cells"`
}

// addressLimiter is a token bucket per client address.
type addressLimiter struct {
	mu sync.Mutex
	m  map[string]*rate.Limiter
}

func (l *addressLimiter) allow(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || len(l.m) >= maxShareAddresses {
		l.m = map[string]*rate.Limiter{} // forget all at once: a bound, not an eviction policy
	}
	lim := l.m[addr]
	if lim == nil {
		lim = rate.NewLimiter(rate.Every(shareEvery), shareBurst)
		l.m[addr] = lim
	}
	return lim.Allow()
}

func (s *Server) shareHandler() http.Handler {
	lim := &addressLimiter{}
	return httpguard.CrossOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !lim.allow(clientOf(r)) {
			w.Header().Set("Retry-After", strconv.Itoa(int(shareEvery/time.Second)))
			writeError(w, http.StatusTooManyRequests, apiError{Error: fmt.Sprintf("too many submissions from this address: %d at once, then one every %v", shareBurst, shareEvery)})
			return
		}
		s.handleShare(w, r)
	}))
}

func (s *Server) handleShare(w http.ResponseWriter, r *http.Request) {
	req, aerr := decodeShare(w, r)
	if aerr != nil {
		writeError(w, aerr.status, *aerr)
		return
	}
	rep, aerr := checkShare(req)
	if aerr == nil {
		aerr = checkBatch(req.Batch)
	}
	if aerr != nil {
		writeError(w, http.StatusBadRequest, *aerr)
		return
	}
	ua := req.Browser.UserAgent
	if len(ua) > maxUserAgent {
		ua = ua[:maxUserAgent]
	}
	name, version := browserOf(ua)
	b := results.Browser{
		Name: name, Version: version, UserAgent: ua, HardwareConcurrency: req.Browser.HardwareConcurrency,
		CrossOriginIsolated: req.Browser.CrossOriginIsolated, TimerResolutionNS: req.Browser.TimerResolutionNS,
	}
	// Each cell names the browser that measured it, as a server cell names its runtime.
	if name != "other" {
		for i := range rep.Results {
			rep.Results[i].Runtime = strings.TrimSpace(name + " " + version)
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	run := results.NewBrowserRun(b, osOf(ua), rep)
	var id int64
	var err error
	if req.Batch != "" {
		id, err = s.savePageBrowserCells(ctx, req.Batch, run)
	} else {
		id, err = s.opts.Results.Save(ctx, run)
	}
	if errors.Is(err, results.ErrFull) {
		writeError(w, http.StatusInsufficientStorage, apiError{Error: "this server's results store is full: it stores no more shared runs until its operator deletes old ones or raises its limit (--results-max-bytes); nothing of this submission was stored"})
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, apiError{Error: "the results store failed: " + err.Error()})
		return
	}
	writeJSON(w, http.StatusCreated, shareAnswer{Run: id, Cells: len(rep.Results)})
}

// checkShare checks a submission as the server checks its own cells: each kernel, its
// arguments and its value against the catalogue, the samples within the page's counts
// and sizes; the summary is computed here from the samples, never taken from the page.
func checkShare(req shareRequest) (report.Report, *apiError) {
	b := req.Browser
	switch {
	case b.HardwareConcurrency < 0 || b.HardwareConcurrency > 4096:
		return report.Report{}, &apiError{Error: fmt.Sprintf("browser.hardware_concurrency = %d is out of range: allowed 0 to 4096", b.HardwareConcurrency), Field: "browser.hardware_concurrency"}
	case !(b.TimerResolutionNS >= 0 && b.TimerResolutionNS <= 1e9):
		return report.Report{}, &apiError{Error: fmt.Sprintf("browser.timer_resolution_ns = %v is out of range: allowed 0 to 1e9", b.TimerResolutionNS), Field: "browser.timer_resolution_ns"}
	case len(req.Cells) == 0:
		return report.Report{}, &apiError{Error: "cells is empty: share at least one browser cell", Field: "cells"}
	case len(req.Cells) > maxShareCells:
		return report.Report{}, &apiError{Error: fmt.Sprintf("%d cells: a submission holds at most %d", len(req.Cells), maxShareCells), Field: "cells"}
	case req.Method.Runs < 1 || req.Method.Runs > runner.MaxJobRuns:
		return report.Report{}, &apiError{Error: fmt.Sprintf("method.runs = %d is out of range: allowed 1 to %d", req.Method.Runs, runner.MaxJobRuns), Field: "method.runs"}
	case req.Method.Warmup < 0 || req.Method.Warmup > 100:
		return report.Report{}, &apiError{Error: fmt.Sprintf("method.warmup = %d is out of range: allowed 0 to 100", req.Method.Warmup), Field: "method.warmup"}
	case !(req.Method.MinSampleNS >= 0 && req.Method.MinSampleNS <= float64(runner.MaxMinSample)):
		return report.Report{}, &apiError{Error: fmt.Sprintf("method.min_sample_ns = %v is out of range: allowed 0 to %v", req.Method.MinSampleNS, float64(runner.MaxMinSample)), Field: "method.min_sample_ns"}
	}
	rep := report.Report{Method: report.Method{
		Runs: req.Method.Runs, Warmup: req.Method.Warmup, MinSample: time.Duration(req.Method.MinSampleNS),
		Timing: "measured by the browser, in a Web Worker, with performance.now() around each sample (web/src/harness.ts); shared by its page and checked by the server against the catalogue",
	}}
	resolution := clockResolution(b.TimerResolutionNS)
	for i, c := range req.Cells {
		res, aerr := checkSharedCell(c, req.Method.Runs, resolution)
		if aerr != nil {
			aerr.Error = fmt.Sprintf("cell %d: %s", i+1, aerr.Error)
			aerr.Field = fmt.Sprintf("cells[%d].%s", i, aerr.Field)
			return report.Report{}, aerr
		}
		rep.Results = append(rep.Results, res)
	}
	if err := results.CheckCells(rep.Results); err != nil {
		field := "cells"
		if dup, ok := errors.AsType[*results.DuplicateCellError](err); ok {
			field = fmt.Sprintf("cells[%d]", dup.Second)
		}
		return report.Report{}, &apiError{Error: err.Error(), Field: field}
	}
	return rep, nil
}

func checkSharedCell(c sharedCell, runs int, resolution float64) (measure.Result, *apiError) {
	if !containsString(browserEngines, c.Engine) {
		return measure.Result{}, &apiError{Error: fmt.Sprintf("engine %q is not a browser engine: a page shares %s cells (the server stores its own)", c.Engine, strings.Join(browserEngines, " and ")), Field: "engine"}
	}
	k, aerr := lookupKernel(c.Kernel)
	if aerr != nil {
		return measure.Result{}, aerr
	}
	if err := k.Check(c.Args); err != nil {
		return measure.Result{}, &apiError{Error: err.Error(), Field: "args"}
	}
	label := k.Label(c.Args) + " on " + c.Engine
	want := k.Expected(c.Args)
	got, err := strconv.ParseInt(c.Value, 10, 64)
	if err != nil {
		return measure.Result{}, &apiError{Error: fmt.Sprintf("%s: value %q is not a decimal integer", label, c.Value), Field: "value"}
	}
	if got != want {
		return measure.Result{}, &apiError{Error: fmt.Sprintf("%s: value %d is not the catalogue's %d: a wrong result is not a time", label, got, want), Field: "value"}
	}
	if len(c.Samples) == 0 || len(c.Samples) > runs {
		return measure.Result{}, &apiError{Error: fmt.Sprintf("%s: %d samples: allowed 1 to the run's %d timed runs", label, len(c.Samples), runs), Field: "samples_ns"}
	}
	if c.Calls < 1 || c.Calls > measure.MaxCalls {
		return measure.Result{}, &apiError{Error: fmt.Sprintf("%s: calls = %d is out of range: allowed 1 to %d", label, c.Calls, measure.MaxCalls), Field: "calls"}
	}
	for _, v := range c.Samples {
		if aerr := checkSample(label, v, c.Calls, resolution); aerr != nil {
			return measure.Result{}, aerr
		}
	}
	if c.Warmup < 0 || c.Warmup > 100 || !(c.FirstNS >= 0 && c.FirstNS <= maxSampleNS) {
		return measure.Result{}, &apiError{Error: fmt.Sprintf("%s: warmup (0 to 100) or first_ns (0 to %g) out of range", label, maxSampleNS), Field: "warmup"}
	}
	res := measure.Result{
		Kernel: k.Name, Args: c.Args, Engine: c.Engine, Runs: len(c.Samples), Warmup: c.Warmup,
		Value: got, Expected: want, Calls: c.Calls, Samples: c.Samples, First: time.Duration(c.FirstNS),
	}
	res.Min, res.Median, res.Max, res.CI = measure.Summarize(c.Samples)
	return res, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var (
	uaBrowsers = []struct {
		name string
		re   *regexp.Regexp
	}{
		{"Edge", regexp.MustCompile(`Edg/([\d.]+)`)},
		{"Firefox", regexp.MustCompile(`Firefox/([\d.]+)`)},
		{"Chrome", regexp.MustCompile(`(?:HeadlessChrome|Chrome|Chromium)/([\d.]+)`)},
		{"Safari", regexp.MustCompile(`Version/([\d.]+).*Safari/`)},
	}
	uaOS = []struct{ name, marker string }{
		{"android", "Android"}, {"ios", "iPhone"}, {"ios", "iPad"}, {"windows", "Windows"}, {"darwin", "Mac OS X"}, {"linux", "Linux"}, {"freebsd", "FreeBSD"},
	}
)

// browserOf reads the browser's name and major version from its user agent.
func browserOf(ua string) (name, version string) {
	for _, b := range uaBrowsers {
		if m := b.re.FindStringSubmatch(ua); m != nil {
			major, _, _ := cutDot(m[1])
			return b.name, major
		}
	}
	return "other", ""
}

func cutDot(v string) (string, string, bool) {
	for i := range v {
		if v[i] == '.' {
			return v[:i], v[i+1:], true
		}
	}
	return v, "", false
}

// osOf reads the OS from a user agent, in Go's GOOS words where there is one.
func osOf(ua string) string {
	for _, o := range uaOS {
		if strings.Contains(ua, o.marker) {
			return o.name
		}
	}
	return "unknown"
}
