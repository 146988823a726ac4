package load

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net"
	"os"
	"sort"
	"strconv"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Result is what a worker produces for one request (or one delivered message).
type Result struct {
	Intended time.Time     // when the request was meant to start (= Start in the closed model)
	Start    time.Time     // when it started
	Latency  time.Duration // from Intended to the end of the answer (coordinated omission corrected)
	Service  time.Duration // from Start to the end of the answer (uncorrected)
	Status   int           // HTTP status; 0 when no answer
	Bytes    int64         // wire bytes of the answer
	Err      error         // nil on an answer with a status below 400
}

// Error kinds, as reports count them.
const (
	ErrConnect  = "connect"
	ErrTimeout  = "timeout"
	ErrIO       = "io"
	ErrProtocol = "protocol"
	Err4xx      = "status 4xx"
	Err5xx      = "status 5xx"
)

// ErrorKind sorts an error into one of the Err* kinds.
func ErrorKind(err error) string {
	var ce *connectError
	var ne net.Error
	var se *statusError
	switch {
	case errors.As(err, &se):
		if se.code >= 500 {
			return Err5xx
		}
		return Err4xx
	case errors.As(err, &ce):
		return ErrConnect
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return ErrTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return ErrConnect
	case errors.Is(err, errProtocol):
		return ErrProtocol
	default:
		return ErrIO
	}
}

// errorExample words an error of the kind for a report, its cause said once: a refused
// connection reads "connection refused" whichever client met it (net/http says
// `Get "…": dial tcp …: connect: connection refused`), the rest as they are.
func errorExample(kind string, err error) string {
	var errno syscall.Errno
	if kind == ErrConnect && errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// statusError is an answer with a 4xx or 5xx status.
type statusError struct{ code int }

func (e *statusError) Error() string { return "HTTP status " + strconv.Itoa(e.code) }

// Histogram bounds: 1 µs to 1 hour, 3 significant digits.
const (
	histMin     = 1
	histMax     = int64(time.Hour / time.Microsecond)
	histSigFigs = 3
)

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histMin, histMax, histSigFigs)
}

func recordDuration(h *hdrhistogram.Histogram, d time.Duration) {
	us := d.Microseconds()
	if us < histMin {
		us = histMin
	}
	if us > histMax {
		us = histMax
	}
	h.RecordValue(us)
}

// Metrics consumes Results: latency histograms and counters. One Metrics belongs to one
// worker (or one shard of workers); Merge combines them at the end of a run.
type Metrics struct {
	Latency *hdrhistogram.Histogram // corrected latency (the closed model has only this one)
	Service *hdrhistogram.Histogram // uncorrected latency (open model)
	Sent    int64
	OK      int64
	Bytes   int64
	Late    int64
	MaxLag  time.Duration
	Errors  map[string]int64
	Status  map[int]int64
	// FirstErr keeps one example message per error kind.
	FirstErr map[string]string
}

// NewMetrics returns empty Metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		Latency:  newHistogram(),
		Service:  newHistogram(),
		Errors:   map[string]int64{},
		Status:   map[int]int64{},
		FirstErr: map[string]string{},
	}
}

// Add consumes one Result. lateAfter is the open model's tolerance (0 in the closed model).
func (m *Metrics) Add(r *Result, lateAfter time.Duration) {
	m.Sent++
	m.Bytes += r.Bytes
	if r.Status != 0 {
		m.Status[r.Status]++
	}
	if lag := r.Start.Sub(r.Intended); lateAfter > 0 && lag > lateAfter {
		m.Late++
		if lag > m.MaxLag {
			m.MaxLag = lag
		}
	}
	if r.Err != nil {
		k := ErrorKind(r.Err)
		m.Errors[k]++
		if _, ok := m.FirstErr[k]; !ok {
			m.FirstErr[k] = errorExample(k, r.Err)
		}
		return
	}
	m.OK++
	recordDuration(m.Latency, r.Latency)
	recordDuration(m.Service, r.Service)
}

// Merge adds other into m.
func (m *Metrics) Merge(other *Metrics) {
	m.Latency.Merge(other.Latency)
	m.Service.Merge(other.Service)
	m.Sent += other.Sent
	m.OK += other.OK
	m.Bytes += other.Bytes
	m.Late += other.Late
	if other.MaxLag > m.MaxLag {
		m.MaxLag = other.MaxLag
	}
	for k, v := range other.Errors {
		m.Errors[k] += v
	}
	for k, v := range other.Status {
		m.Status[k] += v
	}
	for k, v := range other.FirstErr {
		if _, ok := m.FirstErr[k]; !ok {
			m.FirstErr[k] = v
		}
	}
}

// Latency is a latency distribution's summary.
type Latency struct {
	Count int64
	Min   time.Duration
	Mean  time.Duration
	P50   time.Duration
	P90   time.Duration
	P99   time.Duration
	P999  time.Duration
	Max   time.Duration
}

// latencyJSON is a Latency as JSON has it: the durations in milliseconds.
type latencyJSON struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min_ms"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p99_9_ms"`
	Max   float64 `json:"max_ms"`
}

// MarshalJSON writes the durations as milliseconds.
func (l Latency) MarshalJSON() ([]byte, error) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return json.Marshal(latencyJSON{l.Count, ms(l.Min), ms(l.Mean), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max)})
}

// UnmarshalJSON reads what MarshalJSON writes, so that a report read back from JSON (a
// benchmark reading `wasmgap load --format json`) has its latencies.
func (l *Latency) UnmarshalJSON(b []byte) error {
	var j latencyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	d := func(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
	*l = Latency{Count: j.Count, Min: d(j.Min), Mean: d(j.Mean), P50: d(j.P50), P90: d(j.P90), P99: d(j.P99), P999: d(j.P999), Max: d(j.Max)}
	return nil
}

// Summarize reads a Latency from a histogram of microseconds.
func Summarize(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	return Latency{
		Count: h.TotalCount(),
		Min:   us(h.Min()),
		Mean:  time.Duration(h.Mean() * float64(time.Microsecond)),
		P50:   us(h.ValueAtQuantile(50)),
		P90:   us(h.ValueAtQuantile(90)),
		P99:   us(h.ValueAtQuantile(99)),
		P999:  us(h.ValueAtQuantile(99.9)),
		Max:   us(h.Max()),
	}
}

// Bucket is one bar of a latency chart: Count values between From and To.
type Bucket struct {
	From  time.Duration `json:"-"`
	To    time.Duration `json:"-"`
	Count int64         `json:"count"`
	// FromMs and ToMs repeat From and To in milliseconds for JSON readers.
	FromMs float64 `json:"from_ms"`
	ToMs   float64 `json:"to_ms"`
}

// Buckets cuts a histogram of microseconds into about n bars of equal width on a log scale,
// for a chart.
func Buckets(h *hdrhistogram.Histogram, n int) []Bucket {
	if h.TotalCount() == 0 || n < 1 {
		return nil
	}
	lo, hi := float64(h.Min()), float64(h.Max())
	if lo < 1 {
		lo = 1
	}
	if hi <= lo {
		hi = lo + 1
	}
	edges := make([]int64, n+1)
	for i := range edges {
		edges[i] = int64(lo * math.Pow(hi/lo, float64(i)/float64(n)))
	}
	edges[n] = h.Max() + 1
	out := make([]Bucket, n)
	for i := range out {
		from, to := edges[i], edges[i+1]
		out[i] = Bucket{From: time.Duration(from) * time.Microsecond, To: time.Duration(to) * time.Microsecond,
			FromMs: float64(from) / 1000, ToMs: float64(to) / 1000}
	}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		i := sort.Search(n, func(i int) bool { return edges[i+1] > bar.From })
		if i >= n {
			i = n - 1
		}
		out[i].Count += bar.Count
	}
	return out
}
