// Package farm runs one plan's cells on several machines through NATS JetStream: a
// work queue of jobs (one cell each), agents that take them one at a time and run each
// exactly as bench does, and a collector that stores each job's result once.
//
// Subjects and streams (docs/FARM.md has the commands):
//
//   - FARM_JOBS (work queue): farm.job.agent.<agent>.<run> for --each, one copy of the
//     plan per agent, and farm.job.kind.<kind>.<run> for --split, the plan shared among
//     the agents of one kind (same CPU model, cores, memory, OS, architecture and
//     engines). Each agent pulls from its own consumer (agent-<name>) and from its kind's
//     (kind-<kind>), one job at a time. A plan makes these consumers with its ack
//     deadline; the agents only read them.
//   - FARM_RESULTS (work queue): farm.result.<run>, read by that run's collector.
//   - the farm-agents bucket: each agent's description, expiring when the agent stops
//     refreshing it.
//
// Nothing is lost: an agent acknowledges a job only once its result is in FARM_RESULTS,
// and tells the server it is still working while a cell runs; an agent killed mid-cell
// stops doing so, and after the ack deadline its job goes to another agent of its kind
// (or, for --each, to the same agent when it comes back). Nothing is stored twice: a
// result carries its job's id, published with that id as its message id, and the
// results store holds one cell per job id. A job delivered Attempts times without a
// result is answered as refused, never retried for ever.
package farm

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Names of the farm's streams and bucket, and the subjects' prefixes.
const (
	JobsStream    = "FARM_JOBS"
	ResultsStream = "FARM_RESULTS"
	AgentsBucket  = "farm-agents"

	jobSubject    = "farm.job."
	resultSubject = "farm.result."
)

// AgentTTL is how long an agent's description outlives its last refresh: an agent that
// stopped is no longer offered new plans after it.
const AgentTTL = 30 * time.Second

// dedupWindow is how long JetStream remembers a message id: a result published again
// within it (an agent that ran a redelivered job) is dropped before it is stored.
const dedupWindow = 10 * time.Minute

// Auth is how a client authenticates to the NATS server: a token, an nkey seed file, or
// a credentials file (JWT and seed). At most one; none for a server without auth.
type Auth struct {
	Token     string
	NkeyFile  string
	CredsFile string
}

func (a Auth) options() ([]nats.Option, error) {
	n := 0
	var opts []nats.Option
	if a.Token != "" {
		n++
		opts = append(opts, nats.Token(a.Token))
	}
	if a.NkeyFile != "" {
		n++
		o, err := nats.NkeyOptionFromSeed(a.NkeyFile)
		if err != nil {
			return nil, fmt.Errorf("nkey seed %s: %w", a.NkeyFile, err)
		}
		opts = append(opts, o)
	}
	if a.CredsFile != "" {
		n++
		opts = append(opts, nats.UserCredentials(a.CredsFile))
	}
	if n > 1 {
		return nil, errors.New("give one of a token, an nkey seed file or a credentials file")
	}
	return opts, nil
}

// CheckURL checks a NATS server URL: nats://, tls://, ws:// or wss:// with a host.
func CheckURL(u string) error {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || (p.Scheme != "nats" && p.Scheme != "tls" && p.Scheme != "ws" && p.Scheme != "wss") {
		return fmt.Errorf("%q is not a NATS server URL: use nats://host:port (schemes nats, tls, ws, wss)", redact(u))
	}
	return nil
}

// redact hides a token or password in a URL.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	p.User = url.User("xxxxx")
	return p.String()
}

// conn is a connection to the farm's NATS server with its streams and bucket.
type conn struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	agents jetstream.KeyValue
}

// connect connects to the server at u as name and makes sure of the streams and the
// bucket.
func connect(ctx context.Context, u string, auth Auth, name string) (*conn, error) {
	if err := CheckURL(u); err != nil {
		return nil, err
	}
	opts, err := auth.options()
	if err != nil {
		return nil, err
	}
	opts = append(opts, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(500*time.Millisecond), nats.Timeout(5*time.Second))
	nc, err := nats.Connect(u, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", redact(u), err)
	}
	c := &conn{nc: nc}
	if err := c.setup(ctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("NATS at %s: %w", redact(u), err)
	}
	return c, nil
}

func (c *conn) setup(ctx context.Context) error {
	js, err := jetstream.New(c.nc)
	if err != nil {
		return err
	}
	c.js = js
	for _, cfg := range []jetstream.StreamConfig{
		{Name: JobsStream, Subjects: []string{jobSubject + ">"}, Retention: jetstream.WorkQueuePolicy, Duplicates: dedupWindow, Storage: jetstream.FileStorage},
		{Name: ResultsStream, Subjects: []string{resultSubject + ">"}, Retention: jetstream.WorkQueuePolicy, Duplicates: dedupWindow, Storage: jetstream.FileStorage},
	} {
		if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
			return fmt.Errorf("stream %s: %w", cfg.Name, err)
		}
	}
	c.agents, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: AgentsBucket, TTL: AgentTTL, History: 1})
	if err != nil {
		return fmt.Errorf("bucket %s: %w", AgentsBucket, err)
	}
	return nil
}

func (c *conn) close() { c.nc.Close() }

// Subjects of jobs and results.
func agentJobs(agent, run string) string { return jobSubject + "agent." + agent + "." + run }
func kindJobs(kind, run string) string   { return jobSubject + "kind." + kind + "." + run }
func resultSubjectOf(run string) string  { return resultSubject + run }

// The durable consumers of the jobs stream: an agent's own queue and its kind's.
func ownConsumer(agent string) string { return "agent-" + agent }
func kindConsumer(kind string) string { return "kind-" + kind }

// jobsConsumer makes sure of the consumer of a table's jobs, with the plan's ack
// deadline: the plan sets it, never an agent, so that the agents of one kind, which share
// their kind's consumer, work to one deadline.
func (c *conn) jobsConsumer(ctx context.Context, t *Table, ackWait time.Duration) error {
	name, filter := ownConsumer(t.agent), agentJobs(t.agent, "*")
	if t.kind != "" {
		name, filter = kindConsumer(t.kind), kindJobs(t.kind, "*")
	}
	_, err := c.js.CreateOrUpdateConsumer(ctx, JobsStream, jetstream.ConsumerConfig{
		Durable: name, FilterSubject: filter, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: ackWait, MaxDeliver: -1, MaxAckPending: 1000,
	})
	if err != nil {
		return fmt.Errorf("consumer %s: %w", name, err)
	}
	return nil
}

// runOfSubject is the run a job's subject names: its last token.
func runOfSubject(subject string) string {
	return subject[strings.LastIndexByte(subject, '.')+1:]
}

// hashHex is a short hex digest of parts.
func hashHex(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:8])
}

// newRunID is a fresh farm run id.
func newRunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102t150405") + "-" + hex.EncodeToString(b[:])
}
