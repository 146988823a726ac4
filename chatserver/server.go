package chatserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/auth"
	"github.com/wasmgap/wasmgap/chatserver/internal/fastpath"
	"github.com/wasmgap/wasmgap/chatserver/internal/nbio"
	"github.com/wasmgap/wasmgap/chatserver/internal/quota"
	"github.com/wasmgap/wasmgap/chatserver/internal/stream"
	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// Options configures a Server. The zero value of every field is a sensible
// default, given beside it.
type Options struct {
	// DataDir is the folder of the store file (chat.db), created if missing.
	// Empty: a temporary folder removed by Shutdown, so nothing survives a restart.
	DataDir string
	// NoSync skips the fdatasync of the store's log after each commit (one
	// per batch of requests, ~0.1 ms on a virtual disk). A restart of the
	// process still loses nothing (the writes are in the OS's cache), but a
	// crash of the machine may lose the last writes. Default false: every
	// answered send is on disk.
	NoSync bool
	// Retention is how long events stay replayable for a resume, and how long
	// an offline message waits in its mailbox. Default 24h.
	Retention time.Duration
	// QueueSize is how many events may wait for one stream before it is cut
	// as a slow consumer. Default 1024.
	QueueSize int
	// LeaveGrace is how long a user whose last stream closed stays online
	// (no "has left.", messages kept for a resume) in case it reconnects.
	// Default 5s; negative: none, leave at once.
	LeaveGrace time.Duration
	// PresenceWindow coalesces presence notices: a join or leave with none
	// told in the last window is told at once ("X has joined."), the ones
	// within the window after it together at its end ("A, B and 312 others
	// joined."), so a storm of N logins never costs N² deliveries. The
	// window grows by PresenceWindow per 1,000 users online. Default 100ms;
	// negative: every notice at once.
	PresenceWindow time.Duration
	// MaxMessageBytes limits a message's text. Default 4096.
	MaxMessageBytes int
	// SendRate is how many messages per second one nickname may send, with
	// bursts of SendBurst. Defaults 10000 and 10000: the source article's
	// `ab -n 10000 -c 10 .../msg/mary/john%20hello` passes whatever its speed,
	// while one runaway sender cannot flood the hub. Negative: unlimited.
	SendRate  float64
	SendBurst int
	// MaxConnsPerAddr limits the open streams (SSE and WebSocket) of one
	// client IP address. Default 1000; negative: unlimited.
	MaxConnsPerAddr int
	// MaxOpenConnsPerAddr limits the open connections of one client IP
	// address to Serve, streams and requests alike; one more is answered
	// 429 and closed. Behind a trusted proxy (TrustedProxies) it counts the
	// client the proxy names: a connection from the proxy counts for the
	// client of its latest request, a stream for its client until it ends.
	// Default twice MaxConnsPerAddr (2000), unlimited when that is;
	// negative: unlimited.
	MaxOpenConnsPerAddr int
	// MaxOpenConnsPerProxy limits the open connections to Serve of one
	// trusted proxy, for all its clients together. Default ten times
	// MaxOpenConnsPerAddr (20000), unlimited when that is; negative:
	// unlimited.
	MaxOpenConnsPerProxy int
	// MaxConns limits the connections open to Serve at once, all addresses
	// together, so that clients never take the process's last file
	// descriptors (the store and the logs need some). Past it a new
	// connection makes the address holding the most connections give up
	// its oldest, or is answered 503 and closed when its own address holds
	// the most, before any work is done for it. Default: the open-file
	// limit (RLIMIT_NOFILE) less a tenth, at least 256; negative: unlimited.
	MaxConns int
	// MaxQueuedBytesPerAddr limits the bytes the streams of one client
	// address hold that their clients have not read: the events queued in
	// the server and, for each stream, its kernel send buffer (a small one,
	// room for the largest event). A stream whose next event would pass it
	// is cut as a slow consumer (its client resumes from its last id), and
	// a new stream that does not fit is refused with 429. Default: room
	// for MaxConnsPerAddr streams' kernel buffers twice over, at least 128
	// MiB, unlimited when MaxConnsPerAddr is; negative: unlimited.
	MaxQueuedBytesPerAddr int64
	// MaxMailbox limits the messages kept for one offline user. Default 10000.
	MaxMailbox int
	// MaxMailboxes limits how many users may have offline messages waiting;
	// past it a message to one more offline user is refused with 507.
	// Default 100000. Past a tenth of it (or of MaxStoreBytes) waiting
	// from one sending address, a message from it is refused with 429.
	MaxMailboxes int
	// EvictMail makes room for new offline mail by dropping the oldest of
	// the address over its share, or holding the most, instead of refusing
	// the new (off: acknowledged mail waits for delivery or retention).
	EvictMail bool
	// MaxStoreBytes limits the data in the store file (chat.db); past it a
	// send is refused with 507 (nothing stored is lost, and pruning makes
	// room again). Its log (chat.wal) adds at most 64 MB more, emptied at
	// each checkpoint. Default 1 GiB.
	MaxStoreBytes int64
	// MailAckDelay is how long an SSE stream must stay open after writing
	// its user's offline messages before they count as delivered and leave
	// the mailbox (an event stream has no way back to confirm them). A
	// WebSocket confirms them sooner, with the pong to a ping sent right
	// after them; a resume id confirms everything up to it. Default 3s.
	MailAckDelay time.Duration
	// KeepAlive is the interval of SSE ": ping" comments and WebSocket pings.
	// Default 15s. A WebSocket that answers no ping within two intervals is closed.
	KeepAlive time.Duration
	// WriteTimeout bounds every write to a stream. Default 10s.
	WriteTimeout time.Duration
	// AllowedOrigins lists WebSocket Origins accepted besides the server's
	// own host (e.g. "https://example.org"); "*" accepts any origin.
	AllowedOrigins []string
	// AllowedHosts lists the Host names Serve answers to besides those of
	// its address: bound to loopback it answers only to loopback names (a
	// DNS name rebound to 127.0.0.1 is refused with 403). See
	// httpguard.NewHosts for the forms.
	AllowedHosts []string
	// BodyTimeout bounds the reading of a send request's body (POST /send,
	// /msg/): a client that sends it slower is cut with 408. Streams (SSE,
	// WebSocket) are not bounded by it: they read nothing, or read frames
	// under their own deadlines. It is set per request, where an
	// http.Server's ReadTimeout would also end every SSE stream (net/http's
	// background read hits it and cancels the request). Default 10s.
	BodyTimeout time.Duration
	// ReadHeaderTimeout and IdleTimeout configure the http.Server of Serve.
	// Defaults 10s and 120s.
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	// AuthSecret, when set, makes the chat authenticate its users: every
	// login and send must show a connection token of its nickname (a JWT
	// signed with HMAC-SHA256 with this secret, see MintToken), and may act
	// as that nickname only. At least MinSecretBytes long. Default nil: the
	// article's open protocol, where a nickname is a name.
	AuthSecret []byte
	// ClaimNicks, in an open chat, lets the first login of a nickname claim
	// it: it gets a secret (a cookie and an X-Chat-Claim header) that every
	// later login and send as that nickname must show, until Retention and
	// LeaveGrace after the nickname's last stream closed and its last
	// offline message arrived: as long as its history and mail are kept,
	// they go to the claim's holder alone. Default false.
	ClaimNicks bool
	// TrustedProxies are the reverse proxies (CIDR prefixes) whose
	// ProxyHeader names the client's address for every per-address limit;
	// the address of any other peer is its own. Default none.
	TrustedProxies []netip.Prefix
	// ProxyHeader is "X-Forwarded-For" (the default) or "Forwarded".
	ProxyHeader string
	// IPv6Prefix is the leading bits of an IPv6 client address that every
	// per-address limit counts it by (16 to 128; 0: 64, a /64 counts once).
	IPv6Prefix int
	// NATS, with URLs, serves one chat from several nodes through NATS
	// JetStream instead of the local store (see NATSOptions, the package
	// comment and docs/SCALING.md); DataDir is then unused.
	NATS NATSOptions
	// Logger receives connection and error logs. Default: discard.
	Logger *slog.Logger
}

func (o *Options) setDefaults() {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	defInt := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Retention, 24*time.Hour)
	def(&o.LeaveGrace, 5*time.Second)
	def(&o.PresenceWindow, 100*time.Millisecond)
	def(&o.KeepAlive, 15*time.Second)
	def(&o.MailAckDelay, 3*time.Second)
	def(&o.WriteTimeout, 10*time.Second)
	def(&o.ReadHeaderTimeout, 10*time.Second)
	def(&o.BodyTimeout, 10*time.Second)
	def(&o.IdleTimeout, 120*time.Second)
	defInt(&o.QueueSize, 1024)
	defInt(&o.MaxMessageBytes, 4096)
	defInt(&o.MaxConnsPerAddr, 1000)
	if o.MaxOpenConnsPerAddr == 0 {
		o.MaxOpenConnsPerAddr = -1
		if o.MaxConnsPerAddr > 0 {
			o.MaxOpenConnsPerAddr = 2 * o.MaxConnsPerAddr
		}
	}
	if o.MaxOpenConnsPerProxy == 0 {
		o.MaxOpenConnsPerProxy = -1
		if o.MaxOpenConnsPerAddr > 0 {
			o.MaxOpenConnsPerProxy = 10 * o.MaxOpenConnsPerAddr
		}
	}
	if o.MaxConns == 0 {
		o.MaxConns = fastpath.DefaultMaxConns()
	}
	if o.MaxQueuedBytesPerAddr == 0 {
		o.MaxQueuedBytesPerAddr = -1
		if o.MaxConnsPerAddr > 0 {
			// Room for every stream's kernel buffer twice over, at least 128 MiB.
			o.MaxQueuedBytesPerAddr = max(128<<20, int64(o.MaxConnsPerAddr)*4*int64(stream.SendBuffer(o.MaxMessageBytes)))
		}
	}
	defInt(&o.MaxMailbox, 10000)
	defInt(&o.MaxMailboxes, 100000)
	if o.MaxStoreBytes == 0 {
		o.MaxStoreBytes = 1 << 30
	}
	if o.SendRate == 0 {
		o.SendRate = 10000
	}
	if o.SendBurst <= 0 {
		o.SendBurst = max(int(o.SendRate), 1)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Server is a running chat: its node (this process's store, or a share of
// a chat over NATS), its routes and their limits. Serve its Handler.
type Server struct {
	opts    Options
	node    node // where the chat lives (node.go): a localNode or a natsNode
	senders *quota.Senders
	addrs   *quota.Streams
	// clientConns counts the open connections of the clients of trusted
	// proxies (forwarded.go).
	clientConns *quota.Conns
	queued      *quota.Bytes // the bytes each address's streams hold unread
	handler     http.Handler
	auth        auth.Guard         // who speaks (auth.go)
	proxies     *httpguard.Proxies // Options.TrustedProxies
	writers     *stream.Loops      // the streams' writer loops, one per two cores
	watcher     *nbio.Watcher      // idle event streams' connections (nil: a goroutine reads each)

	mu       sync.Mutex
	closing  bool
	stopping atomic.Bool // closing, read without mu
	active   sync.WaitGroup
	shutdown chan struct{}
}

// New opens the chat's node: the store under opts.DataDir and its hub, or
// this process's share of a chat over NATS (opts.NATS).
func New(opts Options) (*Server, error) {
	opts.setDefaults()
	if opts.Retention < 0 || opts.QueueSize < 0 || opts.MaxMessageBytes < 0 || opts.MaxMailbox < 0 ||
		opts.KeepAlive < 0 || opts.WriteTimeout < 0 || opts.MailAckDelay < 0 || opts.MaxMailboxes < 0 || opts.MaxStoreBytes < 0 || opts.BodyTimeout < 0 {
		return nil, errors.New("chat options: Retention, QueueSize, MaxMessageBytes, MaxMailbox, MaxMailboxes, MaxStoreBytes, KeepAlive, WriteTimeout, MailAckDelay and BodyTimeout must be 0 (default) or positive")
	}
	proxies, err := checkAuth(&opts)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, shutdown: make(chan struct{}), proxies: proxies,
		senders: quota.NewSenders(opts.SendRate, opts.SendBurst), addrs: quota.NewStreams(opts.MaxConnsPerAddr),
		queued: quota.NewBytes(opts.MaxQueuedBytesPerAddr)}
	s.clientConns = quota.NewConns(quota.NewStreams(opts.MaxOpenConnsPerAddr), func(remote string) bool { return s.proxies.Trusts(remote) })
	if opts.NATS.URLs != "" {
		s.node, err = joinNATS(&s.opts)
	} else {
		s.node, err = openLocal(&s.opts)
	}
	if err != nil {
		return nil, err
	}
	s.startStreams()
	s.handler = s.routes()
	return s, nil
}

// startStreams starts what writes the streams and watches their clients.
func (s *Server) startStreams() {
	// A loop per two cores: the writes' kernel work (and on loopback, the
	// receivers' too), the hub and the readers need the others. With a
	// loop per core, two loops on two cores cost 1.17x the CPU per
	// broadcast of one to 10,000 receivers, and their delivery p99 was
	// longer too (BENCHMARKS.md).
	s.writers = stream.NewLoops(runtime.GOMAXPROCS(0) / 2)
	var err error
	if s.watcher, err = nbio.NewWatcher(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		s.opts.Logger.Warn("event streams are read on a goroutine each", "err", err)
	}
}

// Handler returns the chat's routes, rooted at "/". Mount it under a prefix
// with http.StripPrefix (the page uses relative URLs only).
func (s *Server) Handler() http.Handler { return s.handler }

// enter admits a request that uses the node; false once Shutdown began.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.active.Add(1)
	return true
}

func (s *Server) exit() { s.active.Done() }

// Shutdown stops taking requests, closes every stream (telling each to
// resume later), waits for the requests in flight and closes the node
// (stores what the hub still holds and closes the store, or leaves the
// NATS cluster). When ctx ends first it closes anyway and
// returns ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		<-s.shutdown
		return nil
	}
	s.closing = true
	s.mu.Unlock()
	defer close(s.shutdown)
	defer s.writers.Close() // after every stream ended (or was given up on)
	defer s.watcher.Close()

	s.stopping.Store(true)
	s.node.cutAll(stream.ShuttingDown)
	err := s.drain(ctx)
	if cerr := s.node.close(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// Serve answers HTTP on ln with the chat's handler, for the Host names of
// ln's address and AllowedHosts, with the Options' timeouts until ctx ends,
// then drains: streams are told to resume later, requests in flight finish,
// the store is closed. It returns nil after a clean drain. The plain
// requests for the page and the send route are answered before net/http
// (package fastpath, with fastSide); the answers are the handler's.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hosts := httpguard.NewHosts(ln.Addr().String(), s.opts.AllowedHosts)
	pages := fastpath.NewListener(ln, fastSide{s}, fastpath.Options{
		Hosts: hosts, HeaderTimeout: s.opts.ReadHeaderTimeout, IdleTimeout: s.opts.IdleTimeout, MaxConnsPerAddr: s.opts.MaxOpenConnsPerAddr,
		Proxy: s.isProxy, MaxConnsPerProxy: s.opts.MaxOpenConnsPerProxy, MaxConns: s.opts.MaxConns, Key: s.proxies.KeyAddr,
	})
	hs := &http.Server{
		Handler:           hosts.Handler(s.Handler()),
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    httpguard.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelDebug),
		ConnContext:       s.clientConns.Context,
		ConnState:         s.clientConns.State,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(pages) }()
	select {
	case err := <-errc:
		pages.Close()
		pages.Wait()
		s.Shutdown(context.Background())
		return fmt.Errorf("serve chat: %w", err)
	case <-ctx.Done():
	}
	dctx, cancel := context.WithTimeout(context.Background(), s.opts.WriteTimeout+5*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var herr, serr error
	wg.Go(func() {
		herr = hs.Shutdown(dctx)
		pages.Close()
		pages.Wait()
	})
	wg.Go(func() { serr = s.Shutdown(dctx) })
	wg.Wait()
	<-errc
	return errors.Join(serr, herr)
}

// drain waits until the requests in flight finished, or ctx ended.
func (s *Server) drain(ctx context.Context) error {
	drained := make(chan struct{})
	go func() { s.active.Wait(); close(drained) }()
	select {
	case <-drained:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("chat shutdown: requests still running: %w", ctx.Err())
	}
}
