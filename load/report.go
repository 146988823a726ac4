package load

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of one run: what was measured, how, and the figures.
type Report struct {
	Scenario    string        `json:"scenario"` // "http", "chat-send", "sse-fanout", "ws-fanout"
	Target      string        `json:"target"`
	Method      string        `json:"method,omitempty"`
	Model       string        `json:"model"` // "closed" or "open"
	Connections int           `json:"connections"`
	Rate        float64       `json:"rate,omitempty"`    // requested total rate, open model
	Ramp        time.Duration `json:"ramp_ns,omitempty"` // the rate's linear ramp from 0, open model
	Requests    int           `json:"requests,omitempty"`
	Duration    time.Duration `json:"duration_ns,omitempty"`
	Warmup      time.Duration `json:"warmup_ns,omitempty"`
	KeepAlive   bool          `json:"keep_alive"`
	HTTP        string        `json:"http,omitempty"`
	Client      string        `json:"client,omitempty"`
	Loops       int           `json:"loops,omitempty"` // event loops of the epoll client
	GOMAXPROCS  int           `json:"gomaxprocs"`
	Started     time.Time     `json:"started"`

	Elapsed        time.Duration     `json:"elapsed_ns"`
	Sent           int64             `json:"sent"` // requests sent and finished (answered or failed)
	OK             int64             `json:"ok"`
	Errors         map[string]int64  `json:"errors"`
	ErrorExamples  map[string]string `json:"error_examples,omitempty"`
	Status         map[string]int64  `json:"status"`
	Bytes          int64             `json:"bytes"`
	RequestsPerSec float64           `json:"requests_per_sec"`
	BytesPerSec    float64           `json:"bytes_per_sec"`

	// Latency is the latency of successful requests; in the open model it is measured from
	// each request's intended send time (coordinated omission corrected). For message
	// scenarios it is the send→receive latency of delivered messages.
	Latency Latency `json:"latency"`
	// Uncorrected is the open model's latency measured from the actual send time, as tools
	// without coordinated omission correction report it.
	Uncorrected *Latency `json:"uncorrected,omitempty"`
	// Late counts requests that started more than LateAfter behind their intended time;
	// MaxLag is the worst such delay; Unsent counts requests the schedule asked for but the
	// generator never sent before the run's end.
	Late   int64         `json:"late,omitempty"`
	MaxLag time.Duration `json:"max_lag_ns,omitempty"`
	Unsent int64         `json:"unsent,omitempty"`

	Histogram []Bucket `json:"histogram,omitempty"`

	// Delivery holds the message scenarios' counts.
	Delivery *Delivery `json:"delivery,omitempty"`
	// Server holds the sampled server process figures (--pid).
	Server *ProcStats `json:"server,omitempty"`
	// ServerPhases splits a chat scenario's server figures (--pid) at the end of the login.
	ServerPhases *ServerPhases `json:"server_phases,omitempty"`
	Notes        []string      `json:"notes,omitempty"`
}

// Delivery counts messages in the chat scenarios.
type Delivery struct {
	Receivers  int           `json:"receivers"`   // subscribers connected
	Senders    int           `json:"senders"`     // distinct sender nicks
	Sent       int64         `json:"sent"`        // messages accepted by the server
	SendErrors int64         `json:"send_errors"` // sends that failed (not expected to arrive)
	Expected   int64         `json:"expected"`    // deliveries expected (sent × receivers per message)
	Delivered  int64         `json:"delivered"`   // distinct deliveries seen
	Lost       int64         `json:"lost"`        // expected − delivered
	Duplicated int64         `json:"duplicated"`  // deliveries seen more than once
	RampUp     time.Duration `json:"ramp_up_ns"`  // time to log every receiver in (0 when not all were)
	Reconnects int64         `json:"reconnects"`  // receiver connections that dropped and resumed

	// Welcomed is how many receivers were welcomed within LoginTime; when fewer than
	// Receivers, nothing was sent.
	Welcomed         int           `json:"welcomed"`
	LoginTime        time.Duration `json:"login_time_ns"`
	LoginConcurrency int           `json:"login_concurrency"` // logins in flight at most
	LoginRate        float64       `json:"login_rate,omitempty"`
	// GeneratorRSS is this process's resident memory at the end of the login (every receiver
	// welcomed, or the login time passed), and RSSPerReceiver its growth over the login
	// divided by the receivers holding a connection then (0 where unknown).
	GeneratorRSS   int64 `json:"generator_rss_bytes,omitempty"`
	RSSPerReceiver int64 `json:"rss_per_receiver_bytes,omitempty"`
	// FileLimit is the open-file limit (RLIMIT_NOFILE) the run had, its soft limit raised to
	// the hard one at start; FilesNeeded what the receivers and sends need, about.
	FileLimit   uint64 `json:"file_limit,omitempty"`
	FilesNeeded int    `json:"files_needed,omitempty"`
	// Targets splits the counts by chat node, when the run had several.
	Targets []TargetDelivery `json:"targets,omitempty"`
}

// TargetDelivery is one chat node's share of a run with several targets.
type TargetDelivery struct {
	URL        string `json:"url"`
	Receivers  int    `json:"receivers"` // receivers assigned to it
	Welcomed   int64  `json:"welcomed"`
	Sent       int64  `json:"sent"` // messages it accepted
	SendErrors int64  `json:"send_errors"`
	Delivered  int64  `json:"delivered"` // deliveries to its receivers
}

func (rep *Report) fill(m *Metrics, elapsed time.Duration) {
	rep.Elapsed = elapsed
	rep.Sent, rep.OK, rep.Bytes = m.Sent, m.OK, m.Bytes
	rep.Errors = m.Errors
	if len(m.FirstErr) > 0 {
		rep.ErrorExamples = m.FirstErr
	}
	rep.Status = map[string]int64{}
	for code, n := range m.Status {
		rep.Status[strconv.Itoa(code)] = n
	}
	if s := elapsed.Seconds(); s > 0 {
		rep.RequestsPerSec = float64(m.Sent) / s
		rep.BytesPerSec = float64(m.Bytes) / s
	}
	rep.Latency = Summarize(m.Latency)
	rep.Histogram = Buckets(m.Latency, 40)
}

// ErrorCount is the total of all error kinds.
func (rep *Report) ErrorCount() int64 {
	var n int64
	for _, v := range rep.Errors {
		n += v
	}
	return n
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteText writes the report as a readable summary, method first.
func WriteText(w io.Writer, rep *Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format, a...) }

	p("Scenario:\t%s\n", rep.Scenario)
	p("Target:\t%s %s\n", rep.Method, rep.Target)
	unit, conns := "requests", fmt.Sprintf("%d connection(s)", rep.Connections)
	if rep.Delivery != nil {
		unit, conns = "messages", fmt.Sprintf("%d send(s) in flight", rep.Connections)
	}
	method := fmt.Sprintf("%s model, %s", rep.Model, conns)
	if rep.Model == "open" {
		method += fmt.Sprintf(", %g %s/s intended", rep.Rate, unit)
		if rep.Ramp > 0 {
			method += fmt.Sprintf(" (ramped up from 0 over %v)", rep.Ramp)
		}
	}
	if rep.HTTP != "" {
		ka := "keep-alive"
		if !rep.KeepAlive {
			ka = "new connection per request"
		}
		method += fmt.Sprintf(", HTTP/%s, %s, %s client", rep.HTTP, ka, rep.Client)
		if rep.Loops > 0 {
			method += fmt.Sprintf(" (%d event loop(s))", rep.Loops)
		}
	}
	p("Method:\t%s\n", method)
	var bounds []string
	if rep.Requests > 0 {
		bounds = append(bounds, fmt.Sprintf("%d %s", rep.Requests, unit))
	}
	if rep.Duration > 0 {
		bounds = append(bounds, rep.Duration.String())
	}
	if len(bounds) > 0 {
		p("Bounds:\t%s (first reached)\n", strings.Join(bounds, " or "))
	}
	if rep.Warmup > 0 {
		p("Warm-up:\t%s, excluded from every figure\n", rep.Warmup)
	}
	p("Elapsed:\t%s (GOMAXPROCS %d)\n", rep.Elapsed.Round(time.Millisecond), rep.GOMAXPROCS)
	if rep.Delivery == nil {
		p("Requests:\t%d sent, %d ok, %d errors\n", rep.Sent, rep.OK, rep.ErrorCount())
		p("Requests/s:\t%.2f\n", rep.RequestsPerSec)
		p("Transfer:\t%s total, %s/s\n", bytesString(float64(rep.Bytes)), bytesString(rep.BytesPerSec))
	} else {
		d := rep.Delivery
		if d.Welcomed < d.Receivers {
			p("Receivers:\t%d, of which %d welcomed within %s (%d logins in flight at most), %d sender(s)\n",
				d.Receivers, d.Welcomed, d.LoginTime, d.LoginConcurrency, d.Senders)
		} else {
			p("Receivers:\t%d (all welcomed in %s, %d logins in flight at most), %d sender(s)\n",
				d.Receivers, d.RampUp.Round(time.Millisecond), d.LoginConcurrency, d.Senders)
		}
		if d.FileLimit > 0 {
			p("Open files:\t%d allowed (RLIMIT_NOFILE, soft limit raised to the hard one), about %d needed\n", d.FileLimit, d.FilesNeeded)
		}
		if d.RSSPerReceiver > 0 {
			p("Generator memory:\t%s RSS at the end of the login, %s per receiver\n",
				bytesString(float64(d.GeneratorRSS)), bytesString(float64(d.RSSPerReceiver)))
		}
		p("Messages:\t%d sent, %d send errors, %.2f sent/s\n", d.Sent, d.SendErrors, rep.RequestsPerSec)
		p("Deliveries:\t%d expected, %d delivered, %d lost, %d duplicated\n", d.Expected, d.Delivered, d.Lost, d.Duplicated)
		if d.Reconnects > 0 {
			p("Reconnects:\t%d (resumed with the last event id)\n", d.Reconnects)
		}
		for _, t := range d.Targets {
			p("Target %s:\t%d receivers (%d welcomed), %d sent, %d send errors, %d delivered to its receivers\n",
				t.URL, t.Receivers, t.Welcomed, t.Sent, t.SendErrors, t.Delivered)
		}
	}
	if len(rep.Status) > 0 {
		codes := make([]string, 0, len(rep.Status))
		for c := range rep.Status {
			codes = append(codes, c)
		}
		sort.Strings(codes)
		var parts []string
		for _, c := range codes {
			parts = append(parts, fmt.Sprintf("%s×%d", c, rep.Status[c]))
		}
		p("Status codes:\t%s\n", strings.Join(parts, "  "))
	}
	if len(rep.Errors) > 0 {
		kinds := make([]string, 0, len(rep.Errors))
		for k := range rep.Errors {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			p("Errors %s:\t%d (e.g. %s)\n", k, rep.Errors[k], rep.ErrorExamples[k])
		}
	}
	tw.Flush()

	title := "Latency"
	if rep.Delivery != nil {
		title = "Send→receive latency"
	} else if rep.Model == "open" {
		title = "Latency from intended send time (corrected)"
	}
	fmt.Fprintf(w, "\n%s:\n", title)
	writeLatency(w, rep.Latency)
	if rep.Uncorrected != nil {
		fmt.Fprintf(w, "Latency from actual send time (uncorrected, as closed-model tools report):\n")
		writeLatency(w, *rep.Uncorrected)
		fmt.Fprintf(w, "Late starts (> %s behind schedule): %d, worst %s; never sent: %d\n",
			DefaultLateAfter, rep.Late, rep.MaxLag.Round(time.Microsecond), rep.Unsent)
	}
	if rep.Server != nil {
		s := rep.Server
		fmt.Fprintf(w, "\nServer process %d:\n", s.Pid)
		fmt.Fprintf(w, "  RSS  before %s  peak %s  after %s\n", bytesString(float64(s.RSSBefore)),
			bytesString(float64(s.RSSPeak)), bytesString(float64(s.RSSAfter)))
		fmt.Fprintf(w, "  CPU  mean %.0f%%  peak %.0f%% (of one core); system idle %.0f%% (%d samples)\n",
			s.CPUMean, s.CPUPeak, s.SystemIdle, s.Samples)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
	return nil
}

func writeLatency(w io.Writer, l Latency) {
	if l.Count == 0 {
		fmt.Fprintln(w, "  (no samples)")
		return
	}
	d := func(x time.Duration) string { return fmtDuration(x) }
	fmt.Fprintf(w, "  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  (mean %s, %d samples)\n",
		d(l.P50), d(l.P90), d(l.P99), d(l.P999), d(l.Max), d(l.Mean), l.Count)
}

func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%dµs", d.Microseconds())
	}
}

func bytesString(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.2f KiB", b/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", b)
	}
}
