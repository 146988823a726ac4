package farm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
)

// DefaultAckWait is a plan's ack deadline when it names none: a job whose agent said
// nothing for this long goes to another agent. A running agent says it is working every
// third of it, so the deadline bounds how long a dead agent's job waits, not a cell.
const DefaultAckWait = time.Minute

// CheckAckWait refuses an ack deadline outside 300ms to 1h.
func CheckAckWait(d time.Duration) error {
	if d < 300*time.Millisecond || d > time.Hour {
		return fmt.Errorf("ack deadline %v: allowed 300ms to 1h", d)
	}
	return nil
}

// fetchWait is how long an agent waits for a job before it asks again (and looks at its
// own queue first).
const fetchWait = time.Second

// AgentConfig configures an agent. Name and Engines are required.
type AgentConfig struct {
	// URL is the NATS server, with Auth to authenticate.
	URL  string
	Auth Auth
	// Name names the agent in subjects, results and the store: one per machine.
	Name string
	// Engines are the engines the agent offers; a job naming another is refused. Nil
	// offers every engine installed on the machine (Installed).
	Engines []string
	// Log receives what the agent does: each job taken, done or refused.
	Log *slog.Logger
}

// AgentInfo is what an agent publishes of itself in the farm-agents bucket.
type AgentInfo struct {
	Name    string  `json:"name"`
	Machine Machine `json:"machine"`
}

// agent is a running agent.
type agent struct {
	cfg     AgentConfig
	c       *conn
	machine Machine
	log     *slog.Logger
}

// RunAgent runs an agent until ctx ends: it registers its machine, then takes jobs one
// at a time, from its own queue first and then from its kind's, runs each in a worker
// and answers each with a result. A job in flight when ctx ends is handed back
// (negatively acknowledged) for another agent.
func RunAgent(ctx context.Context, cfg AgentConfig) error {
	if err := CheckName("agent name", cfg.Name); err != nil {
		return err
	}
	installed := Installed()
	var missing []string
	if cfg.Engines == nil {
		cfg.Engines = installed
	}
	for _, name := range cfg.Engines {
		if !slices.Contains(installed, name) {
			missing = append(missing, name)
		}
	}
	if len(cfg.Engines) == 0 {
		return errors.New("an agent offers at least one engine")
	}
	m, err := Describe(cfg.Engines)
	if err != nil {
		return err
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c, err := connect(ctx, cfg.URL, cfg.Auth, "wasmgap agent "+cfg.Name)
	if err != nil {
		return unlessEnded(ctx, err)
	}
	defer c.close()
	a := &agent{cfg: cfg, c: c, machine: m, log: log}
	if err := a.register(ctx); err != nil {
		return unlessEnded(ctx, err)
	}
	own, kind := &queue{name: ownConsumer(cfg.Name)}, &queue{name: kindConsumer(m.Kind)}
	if cfg.Auth == (Auth{}) {
		log.Warn("no credentials given: a NATS server that admits anyone takes jobs and results from anyone (docs/FARM.md, Security)")
	}
	if len(missing) > 0 {
		log.Warn("engines offered whose runtime was not found on this machine: their cells may fail", "engines", strings.Join(missing, ","))
	}
	log.Info("agent ready", "agent", cfg.Name, "kind", m.Kind, "machine", m.Summary(), "engines", strings.Join(m.EngineNames(), ","))
	go a.refresh(ctx)
	for ctx.Err() == nil {
		msg, cons, err := a.next(ctx, own, kind)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			log.Warn("fetch a job", "err", err)
			sleep(ctx, fetchWait)
			continue
		}
		if msg != nil {
			a.handle(ctx, msg, cons)
		}
	}
	_ = c.agents.Delete(context.Background(), cfg.Name)
	return nil
}

// unlessEnded is err, or nil once ctx has ended: an agent stopped while it
// starts has ended as asked (its registration's answer may come after the
// bucket took it).
func unlessEnded(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// register puts the agent's description in the bucket.
func (a *agent) register(ctx context.Context) error {
	js, err := json.Marshal(AgentInfo{Name: a.cfg.Name, Machine: a.machine})
	if err != nil {
		return err
	}
	if _, err := a.c.agents.Put(ctx, a.cfg.Name, js); err != nil {
		return fmt.Errorf("register agent %s: %w", a.cfg.Name, err)
	}
	return nil
}

// refresh keeps the agent's description from expiring while it runs.
func (a *agent) refresh(ctx context.Context) {
	t := time.NewTicker(AgentTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := a.register(ctx); err != nil && ctx.Err() == nil {
				a.log.Warn("refresh the agent's registration", "err", err)
			}
		}
	}
}

// queue is one of an agent's queues of jobs: a durable consumer of the jobs stream that
// the first plan for the agent (or its kind) creates, with the plan's ack deadline.
type queue struct {
	name string
	cons jetstream.Consumer // nil until a plan has made it
}

// bound reports whether the queue's consumer exists, looking it up until it does.
func (a *agent) bound(ctx context.Context, q *queue) (bool, error) {
	if q.cons != nil {
		return true, nil
	}
	cons, err := a.c.js.Consumer(ctx, JobsStream, q.name)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return false, nil // no plan for this queue yet
	}
	if err != nil {
		return false, fmt.Errorf("consumer %s: %w", q.name, err)
	}
	q.cons = cons
	return true, nil
}

// next takes one job: from the agent's own queue if one waits there, else from its
// kind's, waiting up to fetchWait. It returns nil when none came.
func (a *agent) next(ctx context.Context, own, kind *queue) (jetstream.Msg, jetstream.Consumer, error) {
	if ok, err := a.bound(ctx, own); err != nil {
		return nil, nil, err
	} else if ok {
		batch, err := own.cons.FetchNoWait(1)
		if err != nil {
			return nil, nil, err
		}
		for m := range batch.Messages() {
			return m, own.cons, nil
		}
	}
	if ok, err := a.bound(ctx, kind); err != nil || !ok {
		sleep(ctx, fetchWait)
		return nil, nil, err
	}
	batch, err := kind.cons.Fetch(1, jetstream.FetchMaxWait(fetchWait))
	if err != nil {
		return nil, nil, err
	}
	for m := range batch.Messages() {
		return m, kind.cons, nil
	}
	return nil, nil, batch.Error()
}

// handle answers one job of cons: a result with the measured cell, or with why it was
// refused.
func (a *agent) handle(ctx context.Context, msg jetstream.Msg, cons jetstream.Consumer) {
	run := runOfSubject(msg.Subject())
	meta, err := msg.Metadata()
	if err != nil {
		a.log.Warn("a job without metadata: dropped", "subject", msg.Subject(), "err", err)
		_ = msg.Term()
		return
	}
	// A job that cannot be read is answered under its message id, else its place in
	// the stream.
	id := msg.Headers().Get(jetstream.MsgIDHeader)
	if id == "" {
		id = fmt.Sprintf("seq-%d", meta.Sequence.Stream)
	}
	job, err := DecodeJob(msg.Data())
	if err == nil && job.Run != run {
		err = fmt.Errorf("malformed job: it names run %s but came on the subject of run %s", job.Run, run)
	}
	if err == nil {
		id = job.ID
	}
	var refused string
	switch {
	case err != nil:
		refused = err.Error()
	case int(meta.NumDelivered) > job.Attempts:
		refused = fmt.Sprintf("given up after %d deliveries without a result: the agents that took it stopped mid-cell (killed, or their machine gone)", job.Attempts)
	case !a.machine.Offers(job.Cell.Engine):
		refused = fmt.Sprintf("engine %s is not offered by agent %s: it offers %s", job.Cell.Engine, a.cfg.Name, strings.Join(a.machine.EngineNames(), ", "))
	}
	if refused != "" {
		a.log.Warn("job refused", "job", id, "reason", refused)
		if CheckName("run", run) != nil {
			_ = msg.Term() // no run to answer to
			return
		}
		a.answer(ctx, msg, Result{Job: id, Run: run, Refused: refused})
		return
	}
	a.log.Info("job started", "job", id, "cell", job.Cell.Label(), "delivery", meta.NumDelivered)
	cell, err := a.run(ctx, msg, cons, job.Cell)
	switch {
	case ctx.Err() != nil:
		// Stopping: the job goes back for another agent, at once.
		_ = msg.Nak()
		a.log.Info("job handed back", "job", id)
		return
	case err != nil:
		a.log.Warn("job refused", "job", id, "reason", err)
		a.answer(ctx, msg, Result{Job: id, Run: run, Refused: err.Error()})
		return
	}
	a.answer(ctx, msg, Result{Job: id, Run: run, Cell: &cell})
}

// run runs the cell, telling the server every third of the ack deadline (the one the
// plan gave the job's consumer) that the job is still in hand.
func (a *agent) run(ctx context.Context, msg jetstream.Msg, cons jetstream.Consumer, c Cell) (measure.Result, error) {
	ackWait := DefaultAckWait
	if info, err := cons.Info(ctx); err == nil && info.Config.AckWait > 0 {
		ackWait = info.Config.AckWait
	} else if err != nil {
		a.log.Warn("read the job's ack deadline: saying it is in hand as for the default", "err", err)
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(ackWait / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	return runCell(ctx, c, nil)
}

// answer publishes the result and, once the server holds it, acknowledges the job. A
// result the server did not take leaves the job unacknowledged: it is delivered again.
func (a *agent) answer(ctx context.Context, msg jetstream.Msg, r Result) {
	r.Agent, r.Machine = a.cfg.Name, a.machine
	r.Environment = report.CurrentEnvironment()
	if r.Cell != nil {
		r.Environment = r.Environment.WithRuntimes([]measure.Result{*r.Cell})
	}
	data, err := json.Marshal(r)
	if err == nil && len(data) > MaxResultBytes {
		err = fmt.Errorf("result of %d bytes is over the limit of %d bytes", len(data), MaxResultBytes)
	}
	if err != nil {
		a.log.Error("encode the result", "job", r.Job, "err", err)
		data, _ = json.Marshal(Result{Job: r.Job, Run: r.Run, Agent: r.Agent, Machine: r.Machine, Refused: "the result could not be sent: " + err.Error()})
	}
	if _, err := a.c.js.Publish(ctx, resultSubjectOf(r.Run), data, jetstream.WithMsgID(r.Job)); err != nil {
		a.log.Warn("publish the result: the job will be delivered again", "job", r.Job, "err", err)
		return
	}
	if err := msg.DoubleAck(ctx); err != nil {
		a.log.Warn("acknowledge the job (its result is stored; a second one would be dropped)", "job", r.Job, "err", err)
		return
	}
	if r.Cell != nil {
		a.log.Info("job done", "job", r.Job, "cell", r.Cell.Label()+" on "+r.Cell.Engine, "failure", r.Cell.Failure)
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
