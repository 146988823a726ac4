package load

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Progress is a snapshot of a running load test, emitted about every Options.ProgressEvery.
type Progress struct {
	Phase    string        `json:"phase"` // "warmup", "connect", "run" or "drain"
	Elapsed  time.Duration `json:"elapsed_ns"`
	Done     int64         `json:"done"`   // requests (or messages) completed so far in this phase
	Errors   int64         `json:"errors"` // of which failed
	Rate     float64       `json:"rate"`   // completions per second over the last period
	Total    int64         `json:"total"`  // expected completions, 0 when only time bounds the run
	Fraction float64       `json:"fraction"`
}

// client is one worker's way to send the request: raw or net/http.
type client interface {
	do(ctx context.Context) (status int, bytes int64, err error)
	close()
}

// shard is a Metrics shared by a few workers (one worker per shard up to 64 connections), so
// that a run with thousands of connections does not hold thousands of histograms.
type shard struct {
	mu      sync.Mutex
	m       *Metrics
	lastEnd time.Time
	_       [64]byte // keep shards on separate cache lines
}

const maxShards = 64

// httpRun is one plain HTTP run in progress (Run): its options, pacer, clock, counters and
// shards. (Package internal/runner, the kernels' worker processes, is unrelated.)
type httpRun struct {
	o     *Options
	open  bool
	pacer Pacer // when each request is due, open model

	start, measureFrom, until time.Time

	warmSeq, seq atomic.Int64
	done, errs   atomic.Int64
	measuring    atomic.Bool
	wireAtStart  atomic.Int64 // std client: wire bytes read before measuring began
	shards       []shard
	std          stdPool
}

// Run sends the load described by o and returns the report. It returns an error only when the
// options are invalid; request failures are counted in the report.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Connections == 0 {
		o.Connections = 1
	}
	if o.Client == "" {
		o.Client = ClientRaw
		if epollSupported && o.Rate == 0 && strings.HasPrefix(o.Request.URL, "http://") {
			o.Client = ClientEpoll
		}
	}
	if _, err := raiseFileLimit(o.Connections+fileSlack, 0); err != nil {
		return nil, fmt.Errorf("%d connections: %w", o.Connections, err)
	}
	ctx, cancel := context.WithTimeout(ctx, o.maxTime())
	defer cancel()

	r := &httpRun{o: &o, pacer: newPacer(o.Rate, o.Ramp)}
	r.open = r.pacer != nil
	ns := min(o.Connections, maxShards)
	r.shards = make([]shard, ns)
	for i := range r.shards {
		r.shards[i].m = NewMetrics()
	}
	var clients []client
	if o.Client != ClientEpoll {
		clients = make([]client, o.Connections)
		for i := range clients {
			c, err := r.newClient()
			if err != nil {
				return nil, err
			}
			clients[i] = c
		}
	}

	var sampler *procSampler
	if o.Pid > 0 {
		var err error
		if sampler, err = startProcSampler(o.Pid, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}

	r.start = time.Now()
	r.measureFrom = r.start.Add(o.Warmup)
	if o.Duration > 0 {
		r.until = r.measureFrom.Add(o.Duration)
	}
	if o.Warmup == 0 {
		r.measuring.Store(true)
	}

	var wg sync.WaitGroup
	var loopErr error
	if o.Client == ClientEpoll {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loopErr = r.runEpoll(ctx)
		}()
	}
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.worker(ctx, i, clients[i])
		}()
	}
	stopProgress := r.progress(ctx)
	wg.Wait()
	stopProgress()
	if loopErr != nil {
		return nil, loopErr
	}
	cancelled := ctx.Err() != nil && ctx.Err() == context.Canceled

	total := NewMetrics()
	var lastEnd time.Time
	for i := range r.shards {
		total.Merge(r.shards[i].m)
		if r.shards[i].lastEnd.After(lastEnd) {
			lastEnd = r.shards[i].lastEnd
		}
	}
	if o.Client == ClientStd {
		// net/http hides the header bytes from its callers: count the connections' reads.
		total.Bytes = r.std.wire.Load() - r.wireAtStart.Load()
	}
	rep := r.report(total, lastEnd)
	if sampler != nil {
		rep.Server = sampler.stop()
	}
	if cancelled {
		rep.Notes = append(rep.Notes, "the run was cancelled before its bound")
	} else if ctx.Err() != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the run hit its hard time cap of %s", o.maxTime()))
	}
	return rep, nil
}

func (r *httpRun) newClient() (client, error) {
	if r.o.Client == ClientStd {
		return &stdClient{client: r.std.get(r.o), req: &r.o.Request}, nil
	}
	return newRawClient(&r.o.Request, r.o)
}

func (r *httpRun) worker(ctx context.Context, id int, c client) {
	defer c.close()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	if r.o.Warmup > 0 {
		r.loop(ctx, c, nil, timer, &r.warmSeq, r.start, r.measureFrom, 0)
		if r.measuring.CompareAndSwap(false, true) {
			r.wireAtStart.Store(r.std.wire.Load())
		}
	}
	r.loop(ctx, c, &r.shards[id%len(r.shards)], timer, &r.seq, r.measureFrom, r.until, r.o.Requests)
}

// loop sends requests until the phase's bound: limit requests (0: none) or the until time
// (zero: none). A nil shard means warm-up: nothing is recorded.
func (r *httpRun) loop(ctx context.Context, c client, sh *shard, timer *time.Timer, seq *atomic.Int64,
	t0, until time.Time, limit int) {
	lateAfter := time.Duration(0)
	if r.open {
		lateAfter = r.o.lateAfter()
	}
	var res Result
	for ctx.Err() == nil {
		var intended time.Time
		if limit > 0 || r.open {
			k := seq.Add(1) - 1
			if limit > 0 && k >= int64(limit) {
				return
			}
			if r.open {
				intended = t0.Add(r.pacer.At(k))
				if !until.IsZero() && !intended.Before(until) {
					return
				}
				if !waitFor(ctx, timer, intended) {
					return
				}
			}
		}
		now := time.Now()
		if !until.IsZero() && !now.Before(until) {
			return
		}
		if !r.open {
			intended = now
		}
		status, n, err := c.do(ctx)
		end := time.Now()
		if sh == nil {
			continue
		}
		if err == nil && status >= 400 {
			err = &statusError{status}
		}
		res = Result{Intended: intended, Start: now, Latency: end.Sub(intended), Service: end.Sub(now),
			Status: status, Bytes: n, Err: err}
		sh.mu.Lock()
		sh.m.Add(&res, lateAfter)
		if end.After(sh.lastEnd) {
			sh.lastEnd = end
		}
		sh.mu.Unlock()
		r.done.Add(1)
		if err != nil {
			r.errs.Add(1)
		}
	}
}

// expected is the number of measured requests the bounds ask for, 0 if unknown (closed model
// bounded by time only).
func (r *httpRun) expected() int64 {
	var n int64
	if r.open && r.o.Duration > 0 {
		n = r.pacer.Due(r.o.Duration)
	}
	if r.o.Requests > 0 && (n == 0 || int64(r.o.Requests) < n) {
		n = int64(r.o.Requests)
	}
	return n
}

// progress emits Progress events until the returned stop function is called.
func (r *httpRun) progress(ctx context.Context) (stop func()) {
	if r.o.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(r.o.progressEvery())
		defer t.Stop()
		last, lastT := int64(0), time.Now()
		emit := func(now time.Time) {
			p := Progress{Phase: "run", Total: r.expected()}
			if !r.measuring.Load() {
				p.Phase = "warmup"
				p.Elapsed = now.Sub(r.start)
				if r.o.Warmup > 0 {
					p.Fraction = min(1, float64(p.Elapsed)/float64(r.o.Warmup))
				}
				r.o.Progress(p)
				return
			}
			p.Elapsed = now.Sub(r.measureFrom)
			p.Done, p.Errors = r.done.Load(), r.errs.Load()
			if dt := now.Sub(lastT).Seconds(); dt > 0 {
				p.Rate = float64(p.Done-last) / dt
			}
			last, lastT = p.Done, now
			if p.Total > 0 {
				p.Fraction = float64(p.Done) / float64(p.Total)
			}
			if r.o.Duration > 0 {
				p.Fraction = max(p.Fraction, float64(p.Elapsed)/float64(r.o.Duration))
			}
			p.Fraction = min(1, p.Fraction)
			r.o.Progress(p)
		}
		for {
			select {
			case <-done:
				emit(time.Now())
				return
			case <-ctx.Done():
				return
			case now := <-t.C:
				emit(now)
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (r *httpRun) report(m *Metrics, lastEnd time.Time) *Report {
	o := r.o
	rep := &Report{
		Scenario:    "http",
		Target:      o.Request.URL,
		Method:      o.Request.method(),
		Model:       "closed",
		Connections: o.Connections,
		Requests:    o.Requests,
		Duration:    o.Duration,
		Warmup:      o.Warmup,
		KeepAlive:   !o.NoKeepAlive,
		HTTP:        "1.1",
		Client:      string(ClientRaw),
		Started:     r.measureFrom,
		GOMAXPROCS:  runtime.GOMAXPROCS(0),
	}
	if o.HTTP10 {
		rep.HTTP = "1.0"
	}
	if o.Client != "" {
		rep.Client = string(o.Client)
	}
	if o.Client == ClientEpoll {
		rep.Loops = o.loops()
	}
	rep.fill(m, lastEnd.Sub(r.measureFrom))
	if r.open {
		rep.Model = "open"
		rep.Rate, rep.Ramp = o.Rate, o.Ramp
		u := Summarize(m.Service)
		rep.Uncorrected = &u
		rep.Late = m.Late
		rep.MaxLag = m.MaxLag
		if exp := r.expected(); exp > m.Sent {
			rep.Unsent = exp - m.Sent
		}
	}
	return rep
}
