package load

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmgap/wasmgap/internal/benchtool"
)

// Scenario names.
const (
	// ScenarioChatSend: K receivers logged in over SSE or WebSocket, senders posting private
	// messages to them; every message must arrive exactly once.
	ScenarioChatSend = "chat-send"
	// ScenarioSSEFanout: S subscribers over SSE, one broadcaster posting to "all".
	ScenarioSSEFanout = "sse-fanout"
	// ScenarioWSFanout: S subscribers over WebSocket, one broadcaster posting to "all".
	ScenarioWSFanout = "ws-fanout"
	// ScenarioChurn: users logging in at a rate, each logging out at its first event.
	ScenarioChurn = "churn"
)

// Scenario limits.
const (
	// MaxMessages bounds the messages of one scenario run.
	MaxMessages = 1_000_000
	// MaxReceivers bounds the receivers (subscribers) of one scenario run.
	MaxReceivers = 20000
	// DefaultDrain is how long a scenario waits for deliveries after its last send.
	DefaultDrain = 5 * time.Second
	// DefaultLoginConcurrency is how many receivers log in at once by default.
	DefaultLoginConcurrency = 64
	// MaxTargets bounds the chat nodes of one scenario run.
	MaxTargets = 64
)

// ScenarioOptions configures a chat scenario against a wasmgap chat server. The zero value of
// every field but Scenario, Target and a bound (Messages or Duration) is right.
type ScenarioOptions struct {
	Scenario string // ScenarioChatSend, ScenarioSSEFanout, ScenarioWSFanout or ScenarioChurn
	// Target is the chat's base URL: http://host:port/ for `wasmgap chat`, or
	// http://host:port/chat/ for `wasmgap serve`.
	Target string
	// Targets are several chat nodes (their base URLs), used instead of Target when set:
	// receiver i logs in at Targets[i mod len] and message k is sent to Targets[k mod len],
	// so that fan-out can be measured across the nodes of one chat. In chat-send, message k
	// goes to receiver k mod Receivers: with Receivers a multiple of len(Targets), every
	// message is sent to the node its receiver is on.
	Targets []string
	// Server is the kind of server at the targets: ServerWasmgap (default) or, in the fan-out
	// and churn scenarios, a Centrifugo server (centrifugo.go), reached as Centrifugo says.
	Server     string
	Centrifugo CentrifugoOptions

	// Receivers is K (chat-send) or S (fan-out): users logged in and reading. 10 when zero.
	Receivers int
	// Transport is how chat-send's receivers read and churn's users log in: "sse" (default;
	// churn's: "ws") or "ws". The fan-out scenarios set it from their name.
	Transport string
	// Senders is the number of distinct sender nicknames (chat-send; the chat limits each
	// nickname's send rate). 10 when zero. Fan-out has one broadcaster.
	Senders int
	// Concurrency is the number of sends in flight (chat-send); Senders when zero. Fan-out
	// sends one message at a time.
	Concurrency int
	// Messages bounds the number of messages sent (churn: logins); Duration bounds the
	// sending time. One of them must be set.
	Messages int
	Duration time.Duration
	// Rate, when positive, paces the sends at that many messages per second in total (open
	// model); zero sends each message as soon as a sender is free. Churn paces its logins at
	// Rate per second, which it needs.
	Rate float64
	// Ramp, when positive, ramps the send rate up linearly from 0 to Rate over that long
	// (LinearPacer), then holds it. Zero: Rate from the start (ConstantPacer).
	Ramp time.Duration
	// SendVia is "post" (POST /send with JSON, default) or "get" (the source article's
	// GET /msg/<from>/<to>%20<text>).
	SendVia string
	// Drain is how long to wait for deliveries after the last send; DefaultDrain when zero.
	Drain time.Duration
	// LoginConcurrency bounds the receivers logging in at once (dialled and not yet
	// welcomed; churn: not yet logged out); DefaultLoginConcurrency when zero.
	LoginConcurrency int
	// LoginRate, when positive, paces the logins at that many per second.
	LoginRate float64
	// LoginTime bounds the login of all receivers; when it passes before every receiver is
	// welcomed, the run sends nothing and reports how many were. Zero: Timeout plus 1 ms
	// per receiver (plus the time LoginRate needs).
	LoginTime time.Duration
	// FileLimit, when positive, stands in for the process's hard limit on open files
	// (RLIMIT_NOFILE), so that the check of a too-low limit can be tested.
	FileLimit uint64
	// Timeout bounds each send and each connection attempt; DefaultTimeout when zero.
	Timeout time.Duration
	// MaxTime is a hard bound on the whole run; DefaultMaxTime when zero.
	MaxTime time.Duration
	// Progress and ProgressEvery: as in Options.
	Progress      func(Progress)
	ProgressEvery time.Duration
	// Pid: as in Options.
	Pid int
}

func (o *ScenarioOptions) defaults() {
	if o.Receivers == 0 {
		o.Receivers = 10
	}
	switch o.Scenario {
	case ScenarioSSEFanout:
		o.Transport = "sse"
		o.Senders, o.Concurrency = 1, 1
	case ScenarioWSFanout:
		o.Transport = "ws"
		o.Senders, o.Concurrency = 1, 1
	case ScenarioChurn:
		o.Transport = cmp.Or(o.Transport, "ws")
	default:
		o.Transport = cmp.Or(o.Transport, "sse")
		if o.Senders == 0 {
			o.Senders = 10
		}
		if o.Concurrency == 0 {
			o.Concurrency = o.Senders
		}
	}
	if o.SendVia == "" {
		o.SendVia = "post"
	}
}

// Validate says what is wrong with the options, if anything, and what is allowed.
func (o *ScenarioOptions) Validate() error {
	switch o.Scenario {
	case ScenarioChatSend, ScenarioSSEFanout, ScenarioWSFanout:
	case ScenarioChurn:
		if o.Rate <= 0 {
			return fmt.Errorf("churn: rate %g: want the logins per second, above 0", o.Rate)
		}
	default:
		return fmt.Errorf("scenario %q: allowed %s, %s, %s or %s", o.Scenario, ScenarioChatSend, ScenarioSSEFanout, ScenarioWSFanout, ScenarioChurn)
	}
	targets := o.targets()
	if len(targets) == 0 {
		return fmt.Errorf("no target: give the chat's base URL, e.g. http://127.0.0.1:8080/")
	}
	if len(targets) > MaxTargets {
		return fmt.Errorf("%d targets: allowed 1 to %d", len(targets), MaxTargets)
	}
	for _, t := range targets {
		if _, err := chatBase(t); err != nil {
			return err
		}
	}
	if o.Receivers < 0 || o.Receivers > MaxReceivers {
		return fmt.Errorf("receivers %d: allowed 1 to %d", o.Receivers, MaxReceivers)
	}
	if o.Transport != "" && o.Transport != "sse" && o.Transport != "ws" {
		return fmt.Errorf("transport %q: allowed sse or ws", o.Transport)
	}
	if o.Senders < 0 || o.Senders > 10000 {
		return fmt.Errorf("senders %d: allowed 1 to 10000", o.Senders)
	}
	if o.Concurrency < 0 || o.Concurrency > MaxConnections {
		return fmt.Errorf("concurrency %d: allowed 1 to %d", o.Concurrency, MaxConnections)
	}
	if o.Messages < 0 || o.Messages > MaxMessages {
		return fmt.Errorf("messages %d: allowed 1 to %d", o.Messages, MaxMessages)
	}
	if o.LoginConcurrency < 0 || o.LoginConcurrency > MaxReceivers {
		return fmt.Errorf("login concurrency %d: allowed 1 to %d (0: %d)", o.LoginConcurrency, MaxReceivers, DefaultLoginConcurrency)
	}
	if o.LoginRate < 0 {
		return fmt.Errorf("login rate %g: must not be negative (0: as fast as the login concurrency allows)", o.LoginRate)
	}
	if o.Duration < 0 || o.Drain < 0 || o.Timeout < 0 || o.MaxTime < 0 || o.LoginTime < 0 {
		return fmt.Errorf("durations must not be negative")
	}
	if o.Messages == 0 && o.Duration == 0 {
		return fmt.Errorf("unbounded run: set a message count, a duration, or both")
	}
	if o.Rate < 0 {
		return fmt.Errorf("rate %g: must not be negative (0 sends as fast as the server answers)", o.Rate)
	}
	if err := checkRamp(o.Ramp, o.Rate); err != nil {
		return err
	}
	_, err := o.protocol()
	return err
}

// targets is the chat nodes of the run: Targets, or Target alone.
func (o *ScenarioOptions) targets() []string {
	if len(o.Targets) > 0 {
		return o.Targets
	}
	if o.Target == "" {
		return nil
	}
	return []string{o.Target}
}

// filesNeeded is about how many open files a run needs: one per receiver and per send in
// flight (churn: per login at once), and some to spare.
func (o *ScenarioOptions) filesNeeded() int {
	if o.Scenario == ScenarioChurn {
		return o.loginConcurrency() + fileSlack
	}
	return o.Receivers + o.Concurrency + fileSlack
}

func (o *ScenarioOptions) loginConcurrency() int {
	if o.LoginConcurrency > 0 {
		return o.LoginConcurrency
	}
	return DefaultLoginConcurrency
}

// loginTime is how long the receivers may take to be welcomed, all of them.
func (o *ScenarioOptions) loginTime(timeout time.Duration) time.Duration {
	if o.LoginTime > 0 {
		return o.LoginTime
	}
	d := timeout + time.Duration(o.Receivers)*time.Millisecond
	if o.LoginRate > 0 {
		d += time.Duration(float64(o.Receivers) / o.LoginRate * float64(time.Second))
	}
	return d
}

// capacity is the most messages the run may send: the count bound, or what the rate allows
// in the duration, or MaxMessages.
func (o *ScenarioOptions) capacity() int {
	n := MaxMessages
	if o.Messages > 0 {
		n = o.Messages
	}
	if p := newPacer(o.Rate, o.Ramp); p != nil && o.Duration > 0 {
		n = min(n, int(p.Due(o.Duration))+1)
	}
	return n
}

// scenario is one running chat scenario.
type scenario struct {
	o       *ScenarioOptions
	proto   protocol
	nodes   []*node // the targets
	run     string  // random run id: nicknames and message tokens carry it
	token   string  // "lt-<run>-"
	fanout  bool
	timeout time.Duration // each send and each connection attempt

	receivers []string
	senders   []string

	sendTimes  []atomic.Int64 // unix ns when message k was sent, 0 if never
	sendOK     []atomic.Bool
	deliveries []atomic.Int32 // distinct receivers that got message k

	sent, sendErrs atomic.Int64
	expected       atomic.Int64
	delivered      atomic.Int64
	duplicated     atomic.Int64
	connected      atomic.Int64
	// caughtUp is signalled (without blocking) when a delivery brings delivered up to
	// expected: the drain waits on it instead of polling.
	caughtUp chan struct{}

	shards    []shard // delivery latency
	sendStats []shard // send results (errors, status)
	phase     atomic.Value
	kick      chan struct{} // a phase changed: emit progress now
}

// node is one target of a run and its counts.
type node struct {
	base      *url.URL
	stream    *streamTarget
	receivers int
	welcomed  atomic.Int64 // within the login time
	sent      atomic.Int64 // messages accepted
	sendErrs  atomic.Int64
	delivered atomic.Int64 // deliveries to its receivers
}

// setPhase moves to the next phase and has a progress event emitted at once.
func (s *scenario) setPhase(p string) {
	s.phase.Store(p)
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// RunScenario runs one chat scenario and returns its report. It returns an error when the
// options are invalid or the receivers cannot log in; lost messages are counted, not errors.
//
// A run has four steps: log the receivers in (connect), send (run), wait for the deliveries
// still on their way (drain), then stop the receivers and report. Churn's run is its logins.
func RunScenario(ctx context.Context, o ScenarioOptions) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o.defaults()
	maxTime := (&Options{MaxTime: o.MaxTime}).maxTime()
	drain := o.Drain
	if drain == 0 {
		drain = DefaultDrain
	}
	ctx, cancel := context.WithTimeout(ctx, maxTime)
	defer cancel()

	s := newScenario(&o)
	limit, err := raiseFileLimit(o.filesNeeded(), o.FileLimit)
	if err != nil {
		return nil, fmt.Errorf("about %d open files needed: %w", o.filesNeeded(), err)
	}
	var sampler *procSampler
	if o.Pid > 0 {
		var err error
		if sampler, err = startProcSampler(o.Pid, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
	var phases *serverPhases
	if o.Pid > 0 {
		phases = startServerPhases(o.Pid)
	}
	// finish adds the server's sampled figures and the run's notes to its report.
	finish := func(rep *Report) *Report {
		if sampler != nil {
			rep.Server = sampler.stop()
		}
		if limit.raisedFrom > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("raised the open-file limit (RLIMIT_NOFILE) from %d to its hard limit %d", limit.raisedFrom, limit.cur))
		}
		if ctx.Err() == context.DeadlineExceeded {
			rep.Notes = append(rep.Notes, fmt.Sprintf("the run hit its hard time cap of %s", maxTime))
		}
		return rep
	}
	start := time.Now()
	stopProgress := s.progress(ctx, start)
	defer stopProgress()
	if o.Scenario == ScenarioChurn {
		rep := s.churn(ctx, start)
		phases.loggedIn()
		rep.ServerPhases = phases.done(int(rep.Sent), 0)
		return finish(rep), nil
	}

	subs, err := s.connect(ctx)
	if err != nil {
		if sampler != nil {
			sampler.stop()
		}
		return nil, err
	}
	defer subs.stop()
	rampUp := time.Since(start)
	if subs.incomplete {
		// A server too slow to seat everyone: report how far the login got, send nothing.
		subs.stop()
		stopProgress()
		rep := finish(s.report(0, rampUp, subs, limit))
		rep.Notes = append(rep.Notes, fmt.Sprintf("only %d of %d receivers were welcomed within the login time of %s: nothing was sent",
			subs.welcomed, o.Receivers, subs.loginTime))
		return rep, nil
	}

	phases.loggedIn()
	s.setPhase("run")
	sendStart := time.Now()
	s.send(ctx)
	sendTime := time.Since(sendStart)

	s.setPhase("drain")
	caughtUp := s.drain(ctx, drain)
	subs.stop()
	stopProgress()

	rep := finish(s.report(sendTime, rampUp, subs, limit))
	rep.ServerPhases = phases.done(subs.welcomed, s.sent.Load()-s.sendErrs.Load())
	if !caughtUp {
		rep.Notes = append(rep.Notes, fmt.Sprintf("waited %s after the last send for the missing deliveries", drain))
	}
	return rep, nil
}

// newScenario names the run's users and sizes its per-message state.
func newScenario(o *ScenarioOptions) *scenario {
	var rb [4]byte
	rand.Read(rb[:])
	proto, _ := o.protocol() // Validate checked it
	s := &scenario{o: o, proto: proto, run: hex.EncodeToString(rb[:]),
		fanout: o.Scenario != ScenarioChatSend, timeout: (&Options{Timeout: o.Timeout}).timeout(),
		caughtUp: make(chan struct{}, 1), kick: make(chan struct{}, 1)}
	s.token = "lt-" + s.run + "-"
	for _, t := range o.targets() {
		base, _ := chatBase(t) // Validate checked it
		s.nodes = append(s.nodes, &node{base: base, stream: newStreamTarget(base, proto, s.token)})
	}
	for i := range o.Receivers {
		s.nodes[i%len(s.nodes)].receivers++
	}
	s.phase.Store("connect")
	for i := range o.Receivers {
		s.receivers = append(s.receivers, fmt.Sprintf("lt%sr%d", s.run, i))
	}
	for i := range o.Senders {
		s.senders = append(s.senders, fmt.Sprintf("lt%ss%d", s.run, i))
	}
	capacity := o.capacity()
	s.sendTimes = make([]atomic.Int64, capacity)
	s.sendOK = make([]atomic.Bool, capacity)
	s.deliveries = make([]atomic.Int32, capacity)
	// Deliveries are recorded under a shard's lock; a few shards are enough for thousands of
	// receivers (each shard holds two histograms of about 200 KB).
	s.shards = make([]shard, min(o.Receivers, 8))
	for i := range s.shards {
		s.shards[i].m = NewMetrics()
	}
	s.sendStats = make([]shard, min(o.Concurrency, maxShards))
	for i := range s.sendStats {
		s.sendStats[i].m = NewMetrics()
	}
	return s
}

// receivers are the run's logged-in users, reading until stop.
type receivers struct {
	// loops read the fan-out receivers' streams (Linux); nil: each reads on its goroutine.
	loops      *streamLoops
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	reconnects atomic.Int64
	once       sync.Once
	// welcomed is how many were welcomed within the login time; incomplete says the login
	// time passed before all were.
	welcomed   int
	incomplete bool
	loginTime  time.Duration
	// rssBefore and rssAfter are this process's resident memory before the first login and
	// at its end (0 where /proc is missing); streams is how many receivers had a connection
	// then (welcomed, or logging in when the login time passed).
	rssBefore, rssAfter int64
	streams             int
}

// stop logs the receivers out and waits until each has stopped reading. It may be called
// more than once.
func (r *receivers) stop() {
	r.once.Do(func() {
		r.cancel()
		r.wg.Wait()
		if r.loops != nil {
			r.loops.stop()
		}
	})
}

// connect logs every receiver in, at most LoginConcurrency at a time (a receiver counts until
// it is welcomed) and at LoginRate, and waits until each is welcomed, one fails for good, or
// the login time is over. A receiver that fails for good is an error; a login time that
// passes is not: the receivers say how many were welcomed, and the run reports it.
func (s *scenario) connect(ctx context.Context) (*receivers, error) {
	o := s.o
	subCtx, cancel := context.WithCancel(ctx)
	r := &receivers{cancel: cancel, loginTime: o.loginTime(s.timeout)}
	if s.fanout && streamLoopsSupported {
		loops, err := newStreamLoops(defaultStreamLoops())
		if err != nil {
			cancel()
			return nil, err
		}
		r.loops = loops
	}
	r.rssBefore = liveRSS()
	readyC := make(chan *node, o.Receivers) // the node of each welcomed receiver
	errC := make(chan error, o.Receivers)
	gate := make(chan struct{}, o.loginConcurrency())
	// The logins are started from one goroutine, each when the gate and the pace allow it:
	// a receiver's goroutine exists only from its login on.
	r.wg.Go(func() {
		start := time.Now()
		logins := newPacer(o.LoginRate, 0)
		timer := time.NewTimer(time.Hour)
		timer.Stop()
		for i, nick := range s.receivers {
			if logins != nil && !waitFor(subCtx, timer, start.Add(logins.At(int64(i)))) {
				return
			}
			select {
			case <-subCtx.Done():
				return
			case gate <- struct{}{}:
			}
			n := s.nodes[i%len(s.nodes)]
			sh := &s.shards[i%len(s.shards)]
			r.wg.Go(func() {
				released := false
				release := func() {
					if !released {
						released = true
						<-gate
					}
				}
				defer release()
				sub := &subscriber{t: n.stream, nick: nick, transport: o.Transport, timeout: s.timeout, loops: r.loops}
				var seen []uint64 // fan-out: bitmap of the messages this receiver got, grown on use
				err := sub.run(subCtx, func() {
					s.connected.Add(1)
					readyC <- n
					release()
				}, func(ev event) { s.receive(sh, &seen, n, ev) })
				r.reconnects.Add(max(sub.reconnects-1, 0))
				if err != nil {
					errC <- err
				}
			})
		}
	})
	deadline := time.NewTimer(r.loginTime)
	defer deadline.Stop()
	for r.welcomed < o.Receivers {
		var err error
		select {
		case n := <-readyC:
			// Counted here, not by the receiver: a welcome after the login time is not one.
			r.welcomed++
			n.welcomed.Add(1)
			continue
		case e := <-errC:
			err = fmt.Errorf("log in %d receivers over %s: %d welcomed, then: %w", o.Receivers, o.Transport, r.welcomed, e)
		case <-deadline.C:
			r.incomplete = true
			r.streams = r.welcomed + len(gate)
			r.rssAfter = liveRSS()
			return r, nil
		case <-ctx.Done():
			err = fmt.Errorf("log in %d receivers: %d welcomed, then: %w", o.Receivers, r.welcomed, ctx.Err())
		}
		r.stop()
		return nil, err
	}
	r.streams = r.welcomed
	r.rssAfter = liveRSS()
	return r, nil
}

// liveRSS is this process's resident memory after a garbage collection that returned the
// free pages to the system: what the live objects take, not the garbage of the logins. 0
// where /proc is missing.
func liveRSS() int64 {
	debug.FreeOSMemory()
	rss, _ := benchtool.ProcessRSS(os.Getpid())
	return rss
}

// drain waits until every expected delivery has arrived, at most for d, and says whether they
// all did. It wakes on deliveries, not on a clock.
func (s *scenario) drain(ctx context.Context, d time.Duration) (caughtUp bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for s.delivered.Load() < s.expected.Load() {
		select {
		case <-s.caughtUp:
		case <-timer.C:
			return s.delivered.Load() >= s.expected.Load()
		case <-ctx.Done():
			return s.delivered.Load() >= s.expected.Load()
		}
	}
	return true
}

// receive handles one event of one receiver: a message of this run, or anything else (the
// welcome, join and leave notices), which is ignored.
func (s *scenario) receive(sh *shard, seen *[]uint64, n *node, ev event) {
	i := strings.Index(ev.text, s.token)
	if i < 0 {
		return
	}
	now := time.Now().UnixNano()
	rest := ev.text[i+len(s.token):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	k, err := strconv.Atoi(rest[:j])
	if err != nil || k < 0 || k >= len(s.sendTimes) {
		return
	}
	if s.fanout {
		if k/64 >= len(*seen) {
			*seen = append(*seen, make([]uint64, k/64+1-len(*seen))...)
		}
		if (*seen)[k/64]&(1<<(k%64)) != 0 {
			s.duplicated.Add(1)
			return
		}
		(*seen)[k/64] |= 1 << (k % 64)
	} else if s.deliveries[k].Load() > 0 {
		// chat-send: each message has one receiver, so a second sight is a duplicate.
		s.duplicated.Add(1)
		return
	}
	s.deliveries[k].Add(1)
	if n != nil {
		n.delivered.Add(1)
	}
	if s.delivered.Add(1) >= s.expected.Load() {
		select {
		case s.caughtUp <- struct{}{}:
		default:
		}
	}
	if t := s.sendTimes[k].Load(); t > 0 {
		sh.mu.Lock()
		recordDuration(sh.m.Latency, time.Duration(now-t))
		sh.mu.Unlock()
	}
}

// send runs the senders until the count or time bound: Concurrency workers take message
// numbers from one sequence, wait for each one's turn in the open model, and send it.
func (s *scenario) send(ctx context.Context) {
	o := s.o
	client := &http.Client{Transport: NewTransport(o.Concurrency, true), Timeout: s.timeout}
	defer client.CloseIdleConnections()
	limit := int64(len(s.sendTimes))
	t0 := time.Now()
	var until time.Time
	if o.Duration > 0 {
		until = t0.Add(o.Duration)
	}
	pacer := newPacer(o.Rate, o.Ramp)
	var seq atomic.Int64
	var wg sync.WaitGroup
	for w := range o.Concurrency {
		wg.Go(func() {
			sd := &sender{s: s, client: client, sh: &s.sendStats[w%len(s.sendStats)], buf: make([]byte, 4096)}
			timer := time.NewTimer(time.Hour)
			timer.Stop()
			for ctx.Err() == nil {
				k := seq.Add(1) - 1
				if k >= limit {
					return
				}
				if pacer != nil {
					at := t0.Add(pacer.At(k))
					if !until.IsZero() && !at.Before(until) {
						return
					}
					if !waitFor(ctx, timer, at) {
						return
					}
				}
				if !until.IsZero() && !time.Now().Before(until) {
					return
				}
				sd.send(ctx, k)
			}
		})
	}
	wg.Wait()
}

// sender is one send worker's state.
type sender struct {
	s      *scenario
	client *http.Client
	sh     *shard // where its send results go
	body   bytes.Buffer
	buf    []byte
}

// send sends message k and records the result; an accepted message is expected at its
// receivers (one in chat-send, all of them in fan-out).
func (sd *sender) send(ctx context.Context, k int64) {
	s := sd.s
	from := s.senders[int(k)%len(s.senders)]
	to := "all"
	if !s.fanout {
		to = s.receivers[int(k)%len(s.receivers)]
	}
	text := s.token + strconv.FormatInt(k, 10)
	nd := s.nodes[int(k)%len(s.nodes)]
	start := time.Now()
	s.sendTimes[k].Store(start.UnixNano())
	status, n, err := s.proto.publish(ctx, sd.client, nd.base, &sd.body, sd.buf, from, to, text)
	end := time.Now()
	if err == nil && status != 200 {
		err = &statusError{status}
	}
	res := Result{Intended: start, Start: start, Latency: end.Sub(start), Service: end.Sub(start),
		Status: status, Bytes: n, Err: err}
	sd.sh.mu.Lock()
	sd.sh.m.Add(&res, 0)
	if end.After(sd.sh.lastEnd) {
		sd.sh.lastEnd = end
	}
	sd.sh.mu.Unlock()
	s.sent.Add(1)
	if err != nil {
		s.sendErrs.Add(1)
		nd.sendErrs.Add(1)
		return
	}
	nd.sent.Add(1)
	s.sendOK[k].Store(true)
	if s.fanout {
		s.expected.Add(int64(len(s.receivers)))
	} else {
		s.expected.Add(1)
	}
}

// progress emits Progress events (now, at every period, at each phase change and at stop)
// until the returned stop function is called.
func (s *scenario) progress(ctx context.Context, start time.Time) (stop func()) {
	capacity := len(s.sendTimes)
	if s.o.Progress == nil {
		return func() {}
	}
	every := (&Options{ProgressEvery: s.o.ProgressEvery}).progressEvery()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		var last int64
		lastT := time.Now()
		emit := func(now time.Time) {
			p := Progress{Phase: s.phase.Load().(string), Elapsed: now.Sub(start)}
			switch p.Phase {
			case "connect":
				p.Done, p.Total = s.connected.Load(), int64(s.o.Receivers)
			case "run":
				p.Done, p.Errors = s.sent.Load(), s.sendErrs.Load()
				if s.o.Messages > 0 || s.o.Rate > 0 {
					p.Total = int64(capacity)
				}
			default:
				p.Done, p.Total = s.delivered.Load(), s.expected.Load()
			}
			if dt := now.Sub(lastT).Seconds(); dt > 0 && p.Done >= last {
				p.Rate = float64(p.Done-last) / dt
			}
			last, lastT = p.Done, now
			if p.Total > 0 {
				p.Fraction = min(1, float64(p.Done)/float64(p.Total))
			}
			s.o.Progress(p)
		}
		emit(time.Now())
		for {
			select {
			case <-done:
				emit(time.Now())
				return
			case <-ctx.Done():
				return
			case now := <-t.C:
				emit(now)
			case <-s.kick:
				emit(time.Now())
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-finished }) }
}

// targetList is the run's targets, for the report.
func (s *scenario) targetList() string {
	targets := make([]string, len(s.nodes))
	for i, n := range s.nodes {
		targets[i] = n.base.String()
	}
	return strings.Join(targets, ", ")
}

func (s *scenario) report(sendTime, rampUp time.Duration, subs *receivers, limit fileLimit) *Report {
	o := s.o
	sends := NewMetrics()
	for i := range s.sendStats {
		sends.Merge(s.sendStats[i].m)
	}
	lat := NewMetrics()
	for i := range s.shards {
		lat.Merge(s.shards[i].m)
	}
	rep := &Report{
		Scenario:    o.Scenario,
		Target:      s.targetList(),
		Method:      map[string]string{"post": "POST /send", "get": "GET /msg/<from>/<to>%20<text>"}[o.SendVia],
		Model:       "closed",
		Connections: o.Concurrency,
		Requests:    o.Messages,
		Duration:    o.Duration,
		KeepAlive:   true,
		Client:      string(ClientStd),
		GOMAXPROCS:  runtime.GOMAXPROCS(0),
		Started:     time.Now().Add(-sendTime),
	}
	if o.Rate > 0 {
		rep.Model, rep.Rate, rep.Ramp = "open", o.Rate, o.Ramp
	}
	rep.fill(sends, sendTime)
	rep.Latency = Summarize(lat.Latency)
	rep.Histogram = Buckets(lat.Latency, 40)
	d := &Delivery{Receivers: o.Receivers, Senders: o.Senders, Sent: sends.OK, SendErrors: sends.Sent - sends.OK,
		RampUp: rampUp, Reconnects: subs.reconnects.Load(), Duplicated: s.duplicated.Load(),
		Welcomed: subs.welcomed, LoginTime: subs.loginTime, LoginConcurrency: o.loginConcurrency(), LoginRate: o.LoginRate}
	if subs.incomplete {
		d.RampUp = 0 // not everyone logged in: there is no time to log all in
	}
	if subs.rssAfter > 0 && subs.rssBefore > 0 && subs.streams > 0 {
		d.GeneratorRSS = subs.rssAfter
		d.RSSPerReceiver = (subs.rssAfter - subs.rssBefore) / int64(subs.streams)
	}
	if len(s.nodes) > 1 {
		for _, n := range s.nodes {
			d.Targets = append(d.Targets, TargetDelivery{URL: n.base.String(), Receivers: n.receivers,
				Welcomed: n.welcomed.Load(), Sent: n.sent.Load(), SendErrors: n.sendErrs.Load(), Delivered: n.delivered.Load()})
		}
	}
	d.FileLimit, d.FilesNeeded = limit.cur, o.filesNeeded()
	per := int64(1)
	if s.fanout {
		per = int64(o.Receivers)
	}
	for k := range s.sendOK {
		if !s.sendOK[k].Load() {
			continue
		}
		got := int64(s.deliveries[k].Load())
		d.Expected += per
		d.Delivered += min(got, per)
	}
	d.Lost = d.Expected - d.Delivered
	rep.Delivery = d
	return rep
}
