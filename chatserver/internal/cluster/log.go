// Package cluster is the chat's shared log when several nodes serve one
// chat: a NATS JetStream stream (CHAT) that every change of the chat's
// state is appended to as a Record and that every node reads back whole,
// in order, and the key-value bucket chat-nodes in which each node says it
// is alive. A Record's stream sequence numbers the events it makes, so the
// chat has one id space across its nodes.
//
// It knows records, sequences and node ids; what a record does to the chat
// (internal/room's machine, fed the same way a single node feeds it from
// its own log) and whom its events reach are chatserver's. Timed records
// (a leave grace over, a node gone) may be appended by every node at once:
// a message id (Nats-Msg-Id) stores them once.
//
// # The design
//
// (Its guarantees are in docs/SCALING.md.) Every change of the
// chat's state (a post, a stream opened or closed on a node, a leave grace
// over, a mailbox ack, a node gone, a presence window over) is one message,
// and its stream sequence numbers the ids of the events it makes: one id
// space for the chat, so a client resumes on any node. Every node applies the whole stream in
// order to the same state (who has streams open on which node, mailboxes,
// the history of the retention window), using the messages' stream
// timestamps for anything time-dependent, so every node derives the same
// events with the same ids and delivers them to its own streams; a send is
// answered once its node applied it. Timed changes (a leave grace, a node whose key in the
// chat-nodes bucket expired) are messages any node may publish,
// deduplicated by Nats-Msg-Id. A node without its NATS connection answers
// sends and logins with 503 until nats.go has reconnected. A node starting
// replays the stream (at most Retention and MaxStoreBytes of it) to build
// its state. The rules themselves (internal/room) are the ones a single
// node runs: one machine, fed from this node's log or from the stream.
package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	// Stream is the chat's stream; its subjects are subject + a record's kind.
	Stream  = "CHAT"
	subject = "chat."
	bucket  = "chat-nodes"
	dedup   = 2 * time.Minute
	// errCodeDuplicateInProcess: a message of the same Nats-Msg-Id is
	// being stored (nats-server's JSStreamDuplicateMessageConflict).
	errCodeDuplicateInProcess jetstream.ErrorCode = 10158
	// setupFor bounds the tries to set the stream and the bucket up.
	setupFor = 2 * time.Minute
)

// Config is a node's part in the log.
type Config struct {
	URLs string // the NATS servers, comma-separated
	// Replicas of the stream and the bucket; 0: 3, or the number of servers
	// the client knows if fewer.
	Replicas  int
	Retention time.Duration // the stream's max age
	MaxBytes  int64         // the stream's max bytes: past it, appends are refused (Full)
	NodeTTL   time.Duration // a node's key in chat-nodes expires after it
	Node      string        // this node's incarnation, announced when the log opens
	Logger    *slog.Logger
}

// Log is a node's connection to the chat's stream and bucket.
type Log struct {
	log  *slog.Logger
	urls string // as they may be shown
	nc   *nats.Conn
	js   jetstream.JetStream
	kv   jetstream.KeyValue
	cons jetstream.ConsumeContext
}

// CheckURLs checks a --nats list: every entry a nats://, tls://, ws:// or
// wss:// URL with a host.
func CheckURLs(list string) error {
	for u := range strings.SplitSeq(list, ",") {
		u = strings.TrimSpace(u)
		p, err := url.Parse(u)
		if err != nil || p.Host == "" || (p.Scheme != "nats" && p.Scheme != "tls" && p.Scheme != "ws" && p.Scheme != "wss") {
			return fmt.Errorf("chat NATS: %q is not a NATS server URL: use nats://host:port, several separated by commas (schemes nats, tls, ws, wss)", RedactURLs(u))
		}
	}
	return nil
}

// RedactURLs is a --nats list as it may be shown: passwords and tokens hidden.
func RedactURLs(list string) string {
	var out []string
	for u := range strings.SplitSeq(list, ",") {
		u = strings.TrimSpace(u)
		if p, err := url.Parse(u); err == nil && p.User != nil {
			if _, hasPassword := p.User.Password(); hasPassword {
				u = p.Redacted()
			} else {
				p.User = url.User("xxxxx")
				u = p.String()
			}
		}
		out = append(out, u)
	}
	return strings.Join(out, ",")
}

// Open connects to cfg.URLs, makes sure of the stream and the bucket
// (tried again for up to two minutes while a cluster starts) and announces
// cfg.Node; Read then reads the stream. On an error nothing is left open.
func Open(cfg Config) (*Log, error) {
	l := &Log{urls: RedactURLs(cfg.URLs), log: cfg.Logger}
	if err := l.open(cfg); err != nil {
		if l.nc != nil {
			l.nc.Close()
		}
		return nil, err
	}
	return l, nil
}

func (l *Log) open(cfg Config) error {
	log := cfg.Logger
	nc, err := nats.Connect(cfg.URLs,
		nats.Name("wasmgap chat"),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(500*time.Millisecond),
		nats.Timeout(5*time.Second),
		nats.DisconnectErrHandler(func(c *nats.Conn, err error) {
			if !c.IsClosed() {
				log.Warn("NATS disconnected: sends are refused until it reconnects", "urls", l.urls, "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Warn("NATS reconnected", "url", c.ConnectedUrl()) }),
	)
	if err != nil {
		return fmt.Errorf("chat NATS: cannot connect to %s: %w", l.urls, err)
	}
	l.nc = nc
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("chat NATS: %w", err)
	}
	l.js = js
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) || errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("chat NATS: JetStream is not enabled on %s (%v): the chat keeps its events in a JetStream stream; run the servers with JetStream (nats-server -js, and a cluster of three for replicas)", l.urls, err)
		}
		return fmt.Errorf("chat NATS: JetStream account info from %s: %w", l.urls, err)
	}
	replicas := cfg.Replicas
	if replicas == 0 {
		replicas = min(3, max(1, len(nc.Servers())))
	}
	scfg := jetstream.StreamConfig{
		Name:        Stream,
		Description: "wasmgap chat: every change of the chat's state; the sequence is the event id",
		Subjects:    []string{subject + ">"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardNew,
		MaxAge:      cfg.Retention,
		MaxBytes:    cfg.MaxBytes,
		Replicas:    replicas,
		// JetStream refuses a window longer than the max age.
		Duplicates: min(dedup, cfg.Retention),
	}
	// A cluster that is starting, or busy, may take a while to place the
	// stream and the bucket: each step is tried again for up to setupFor.
	start := time.Now()
	for attempt := 1; ; attempt++ {
		actx, acancel := context.WithTimeout(context.Background(), 15*time.Second)
		err = l.setup(actx, scfg, cfg)
		acancel()
		if err == nil {
			break
		}
		if _, final := errors.AsType[*configError](err); final || time.Since(start) > setupFor {
			return err
		}
		log.Warn("chat NATS: setting the stream up, trying again", "attempt", attempt, "err", err)
		time.Sleep(time.Second)
	}
	return nil
}

// Read hands every message of the stream, from its first, to handle, one
// at a time and in order, on a goroutine of the NATS client, until Close.
func (l *Log) Read(handle func(seq uint64, at time.Time, data []byte)) error {
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	cons, err := l.js.OrderedConsumer(cctx, Stream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return fmt.Errorf("chat NATS: read stream %s: %w", Stream, err)
	}
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		md, err := msg.Metadata()
		if err != nil {
			l.log.Error("chat NATS: message without metadata", "err", err)
			return
		}
		handle(md.Sequence.Stream, md.Timestamp, msg.Data())
	})
	if err != nil {
		return fmt.Errorf("chat NATS: read stream %s: %w", Stream, err)
	}
	l.cons = cc
	return nil
}

// setup makes sure of the stream and the bucket and announces this node.
func (l *Log) setup(ctx context.Context, scfg jetstream.StreamConfig, cfg Config) error {
	if err := ensureStream(ctx, l.js, scfg); err != nil {
		return err
	}
	if err := streamLed(ctx, l.js, scfg.Name); err != nil {
		return err
	}
	kv, err := l.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      bucket,
		Description: "wasmgap chat: the nodes alive (each renews its key every NodeTTL/5)",
		TTL:         cfg.NodeTTL,
		Replicas:    scfg.Replicas,
		Storage:     jetstream.FileStorage,
	})
	if err != nil {
		return fmt.Errorf("chat NATS: key-value bucket %s (TTL %v, %d replicas) cannot be created or updated: %w", bucket, cfg.NodeTTL, scfg.Replicas, err)
	}
	l.kv = kv
	if err := l.Alive(ctx, cfg.Node); err != nil {
		return fmt.Errorf("chat NATS: announce this node in %s: %w", bucket, err)
	}
	return nil
}

// streamLed waits until the stream has a leader: a replicated stream just
// created, or one whose servers just started, answers no publish until its
// replicas have elected one, and a node that served before then would
// refuse its first logins.
func streamLed(ctx context.Context, js jetstream.JetStream, name string) error {
	for {
		st, err := js.Stream(ctx, name)
		if err == nil {
			var info *jetstream.StreamInfo
			if info, err = st.Info(ctx); err == nil && (info.Cluster == nil || info.Cluster.Leader != "") {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("chat NATS: stream %s has no leader yet (%v): its replicas are still electing one", name, cmp.Or(err, ctx.Err()))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// configError is a setup error that waiting does not cure.
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

// ensureStream creates the chat's stream, or checks that the one there is
// the chat's (its subjects and retention) and updates its limits.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	describe := fmt.Sprintf("stream %s (subjects %s, limits retention, file storage, %d replicas, max age %v, max bytes %d)", cfg.Name, cfg.Subjects[0], cfg.Replicas, cfg.MaxAge, cfg.MaxBytes)
	st, err := js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			return fmt.Errorf("chat NATS: cannot create the %s: %w", describe, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("chat NATS: cannot read the %s: %w", describe, err)
	}
	have := st.CachedInfo().Config
	if !slices.Equal(have.Subjects, cfg.Subjects) || have.Retention != cfg.Retention || have.Storage != cfg.Storage {
		return &configError{fmt.Sprintf("chat NATS: a stream %s exists that is not the chat's: subjects %v, retention %v, storage %v; the chat needs subjects %v, limits retention, file storage: remove it (nats stream rm %s) or point the chat at other servers", cfg.Name, have.Subjects, have.Retention, have.Storage, cfg.Subjects, cfg.Name)}
	}
	if have.MaxAge != cfg.MaxAge || have.MaxBytes != cfg.MaxBytes || have.Replicas != cfg.Replicas || have.Duplicates != cfg.Duplicates || have.Discard != cfg.Discard {
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			return fmt.Errorf("chat NATS: cannot update the existing stream to the %s: %w", describe, err)
		}
	}
	return nil
}

// URLs is the servers, as they may be shown.
func (l *Log) URLs() string { return l.urls }

// Connected reports whether the node has its connection to NATS now.
func (l *Log) Connected() bool { return l.nc.IsConnected() }

// JetStream is the log's JetStream context, for the chat's other buckets.
func (l *Log) JetStream() jetstream.JetStream { return l.js }

// ErrNoAck: NATS did not acknowledge an append in time; it may or may not
// be stored.
var ErrNoAck = errors.New("NATS did not acknowledge the message")

// Append appends rec (msgID deduplicates it: the copies of a timed record
// that several nodes append are stored once). A synchronous append returns
// once NATS stored it or refused it, within ctx. An async one returns at
// once and leaves the ack to acked, so that one client's records follow
// one another without a round trip each; async appends are never retried
// by the client, so the records one goroutine appends are stored in the
// order it appended them.
func (l *Log) Append(ctx context.Context, rec *Record, msgID string, async bool) (acked func() error, err error) {
	data := rec.encode()
	if !async {
		// No responders (the stream's leader not yet answering: a cluster that
		// just started, or a leader change) is tried again every 100 ms until
		// ctx ends (or 10 s), instead of twice in 0.5 s: no server took the
		// message, and msgID stores it once whatever is retried.
		_, err := l.js.Publish(ctx, subject+rec.Kind, data, jetstream.WithMsgID(msgID), jetstream.WithExpectStream(Stream),
			jetstream.WithRetryAttempts(100), jetstream.WithRetryWait(100*time.Millisecond))
		if err != nil {
			return nil, err
		}
		return func() error { return nil }, nil
	}
	ack, err := l.js.PublishAsync(subject+rec.Kind, data, jetstream.WithMsgID(msgID), jetstream.WithExpectStream(Stream), jetstream.WithRetryAttempts(0))
	if err != nil {
		return nil, err
	}
	return func() error {
		select {
		case <-ack.Ok():
			return nil
		case err := <-ack.Err():
			return err
		case <-ctx.Done():
			return fmt.Errorf("%w (%v)", ErrNoAck, ctx.Err())
		}
	}, nil
}

// Duplicate reports whether an append failed because another node is
// storing the same message (the same msgID) right now: it is stored once.
func Duplicate(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeDuplicateInProcess
}

// Full reports whether an append failed because the stream holds its
// MaxBytes.
func Full(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && strings.Contains(apiErr.Description, "maximum")
}

// Alive renews node's key in chat-nodes: it stays alive for NodeTTL more.
func (l *Log) Alive(ctx context.Context, node string) error {
	_, err := l.kv.Put(ctx, node, []byte(time.Now().UTC().Format(time.RFC3339)))
	return err
}

// Gone reports whether node's key expired (or was deleted): the node
// stopped saying it is alive. An error asking is not gone.
func (l *Log) Gone(ctx context.Context, node string) bool {
	_, err := l.kv.Get(ctx, node)
	return errors.Is(err, jetstream.ErrKeyNotFound)
}

// Leave deletes node's key, when connected, so that the other nodes
// declare it gone at once; then it closes the log.
func (l *Log) Leave(ctx context.Context, node string) {
	if l.nc.IsConnected() {
		l.kv.Delete(ctx, node)
	}
	l.Close()
}

// Close stops reading the stream and closes the connection; the node's
// key stays until it expires, as after a crash.
func (l *Log) Close() {
	if l.cons != nil {
		l.cons.Stop()
	}
	l.nc.Close()
}
