package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/wasmgap/wasmgap/chatserver"
	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// originList is a repeatable --allow-origin flag.
type originList []string

func (o *originList) String() string     { return strings.Join(*o, ",") }
func (o *originList) Set(v string) error { *o = append(*o, v); return nil }

func runChat(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "token" {
		return runChatToken(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("wasmgap chat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmgap chat [flags]\n\nServes the chat alone, with the source article's routes at the root:\n"+
			"  GET /                          the chat page\n"+
			"  GET /<nick>  (Accept: text/event-stream)  log in over SSE\n"+
			"  GET /ws?nick=<nick>            log in over WebSocket\n"+
			"  GET /msg/<from>/<to>%20<text>  send; POST /send {\"from\",\"to\",\"text\"}\n\n"+
			"wasmgap chat token [--ttl 24h] NICK mints a connection token for a chat started with --auth.\n\nflags:")
		fs.PrintDefaults()
	}
	addr := fs.String("addr", chatAddr, "address to listen on (host:port); the host localhost listens on 127.0.0.1 and ::1")
	chatOptions := addChatFlags(fs, chatDataDir, stderr)
	maxOpen := fs.Int("max-open-conns-per-addr", 0, "open TCP connections per client IP, streams and requests alike; one more gets 429 and is closed (default: twice -max-conns-per-addr, 2000, unlimited when that is; negative: unlimited)")
	maxOpenProxy := fs.Int("max-open-conns-per-proxy", 0, "open TCP connections of one --trusted-proxy for all its clients together, each of which -max-open-conns-per-addr counts by the address the proxy names (default: ten times -max-open-conns-per-addr, 20000; negative: unlimited)")
	maxConns := fs.Int("max-conns", 0, "open TCP connections of all clients together; past it the address holding the most gives up its oldest, or one more of its own gets 503 (default: the open-file limit less a tenth; negative: unlimited)")
	verbose := fs.Bool("v", false, "log every connection")
	pprofAddr := fs.String("pprof", "", "serve net/http/pprof (CPU and heap profiles of the running chat) on this loopback address, e.g. 127.0.0.1:6060; a listener of its own, never the chat's")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return exitf(stderr, 2, "wasmgap chat: unexpected arguments %q: every setting is a flag", fs.Args())
	}
	o, err := chatOptions(*verbose)
	if err != nil {
		return exitf(stderr, 2, "wasmgap chat: %v", err)
	}
	o.MaxOpenConnsPerAddr = *maxOpen
	o.MaxOpenConnsPerProxy = *maxOpenProxy
	o.MaxConns = *maxConns

	// The address first: a bad or busy one is reported as such, before the store (which
	// another chat may hold) is opened.
	ln, err := chatserver.Listen(*addr)
	if err != nil {
		return exitf(stderr, 1, "wasmgap chat: %v", err)
	}
	srv, err := chatserver.New(o)
	if err != nil {
		ln.Close()
		return exitf(stderr, 1, "wasmgap chat: %v", err)
	}
	if *pprofAddr != "" {
		pln, err := listenPprof(*pprofAddr)
		if err != nil {
			ln.Close()
			srv.Shutdown(context.Background())
			return exitf(stderr, 2, "wasmgap chat: --pprof: %v", err)
		}
		defer pln.Close()
		fmt.Fprintf(stderr, "profiles on http://%s/debug/pprof/ (go tool pprof http://%s/debug/pprof/profile?seconds=10)\n", pln.Addr(), pln.Addr())
	}
	store := "store in " + o.DataDir
	if o.NATS.URLs != "" {
		store = "state in NATS JetStream (--nats), shared with the other nodes"
	}
	fmt.Fprintf(stdout, "chat on http://%s/ (%s; %s; Ctrl-C or SIGTERM drains and stops)\n", ln.Addr(), store, authBanner(o))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := srv.Serve(ctx, ln); err != nil {
		return exitf(stderr, 1, "wasmgap chat: %v", err)
	}
	fmt.Fprintln(stdout, "chat stopped: every stream told to resume, store closed")
	return 0
}

// listenPprof serves net/http/pprof's handlers on addr, which must be a
// loopback address: profiles show the server's internals and cost CPU.
func listenPprof(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%q is not host:port: %v", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%q is not a loopback address: profiles are served on 127.0.0.1, ::1 or localhost only", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go (&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}).Serve(ln)
	return ln, nil
}

// The default addresses and store folders of `wasmgap chat` and `wasmgap serve`: distinct,
// so that the two run side by side (each holds its store's lock while it runs).
const (
	chatAddr     = "127.0.0.1:8000"
	serveAddr    = "127.0.0.1:8080"
	chatDataDir  = "data/chat"
	serveDataDir = "data/serve-chat"
)

// addChatFlags registers the chat's settings on fs, for `wasmgap chat` and `wasmgap serve`
// alike, with dataDir as --data's default; the returned function gives the options once fs
// is parsed, logging to stderr.
func addChatFlags(fs *flag.FlagSet, dataDir string, stderr io.Writer) func(verbose bool) (chatserver.Options, error) {
	var o chatserver.Options
	var origins originList
	auth := fs.Bool("auth", false, "authenticate users: every login and send shows a connection token of its nickname (wasmgap chat token NICK mints one), signed with the secret of --auth-secret-file or $"+secretEnv)
	secretFile := addSecretFlag(fs)
	fs.BoolVar(&o.ClaimNicks, "claim-nicks", false, "in an open chat, the first login of a nickname claims it: later logins and sends as it must show the secret it got (a cookie, or the X-Chat-Claim header) until -retention and its grace after its last stream and its last offline message, so its history and mail go to it alone")
	fs.Func("trusted-proxy", "a reverse proxy (CIDR or address, repeatable) whose --proxy-header names the client's address for the per-address limits; other peers count as themselves", func(v string) error {
		p, err := httpguard.ParseProxy(v)
		if err != nil {
			return err
		}
		o.TrustedProxies = append(o.TrustedProxies, p)
		return nil
	})
	fs.StringVar(&o.ProxyHeader, "proxy-header", "X-Forwarded-For", "with --trusted-proxy: the header the proxies set, X-Forwarded-For or Forwarded (only that one is read)")
	fs.IntVar(&o.IPv6Prefix, "ipv6-prefix", 64, "leading bits of an IPv6 client address the per-address limits count it by, 16 to 128: a client holding a /64 counts once (128: each address apart)")
	fs.StringVar(&o.DataDir, "data", dataDir, "folder of the store files chat.db and chat.wal (offline messages, history); one process at a time holds it")
	fs.BoolVar(&o.NoSync, "no-fsync", false, "skip the fdatasync of the store's log after each commit (~0.1 ms on a virtual disk): a process restart still loses nothing, a machine crash may lose the last writes")
	fs.DurationVar(&o.Retention, "retention", 0, "how long events stay replayable for a resume and offline messages wait in their mailbox (default 24h)")
	fs.IntVar(&o.QueueSize, "queue", 0, "events that may wait for one stream before it is cut as a slow consumer (default 1024)")
	fs.DurationVar(&o.LeaveGrace, "leave-grace", 0, "how long a user stays online after its last stream closed, for a reconnect (default 5s; negative: none)")
	fs.IntVar(&o.MaxMessageBytes, "max-message", 0, "largest message text in bytes (default 4096)")
	fs.Float64Var(&o.SendRate, "send-rate", 0, "messages per second one nickname may send (default 10000, enough for ab -n 10000 -c 10; negative: unlimited)")
	fs.IntVar(&o.SendBurst, "send-burst", 0, "burst of the send rate (default: the send rate)")
	fs.IntVar(&o.MaxConnsPerAddr, "max-conns-per-addr", 0, "open SSE and WebSocket streams per client IP (default 1000; negative: unlimited)")
	fs.Int64Var(&o.MaxQueuedBytesPerAddr, "max-queued-bytes-per-addr", 0, "bytes the streams of one client IP may hold unread, queued in the server and in their kernel send buffers; past it a stream is cut as a slow consumer (default: room for -max-conns-per-addr streams' buffers twice over, at least 128 MiB; negative: unlimited)")
	fs.IntVar(&o.MaxMailbox, "max-mailbox", 0, "messages kept for one offline user (default 10000)")
	fs.IntVar(&o.MaxMailboxes, "max-mailboxes", 0, "offline users who may have messages waiting; past it a message to one more gets 507, and past a tenth of it (or of -max-store-bytes) waiting from one client IP, a message from it gets 429 (default 100000)")
	fs.BoolVar(&o.EvictMail, "evict-mail", false, "make room for new offline messages by dropping older ones already acknowledged to their senders (a client IP past its share gives up its own oldest; past -max-mailboxes the IP holding the most gives up its oldest) instead of refusing the new ones")
	fs.Int64Var(&o.MaxStoreBytes, "max-store-bytes", 0, "data the store may hold; past it a send gets 507 and nothing stored is lost (default 1 GiB)")
	fs.DurationVar(&o.MailAckDelay, "mail-ack-delay", 0, "how long an SSE stream must stay open after its offline messages before they leave the mailbox; a WebSocket confirms them with a pong (default 3s)")
	fs.DurationVar(&o.KeepAlive, "keepalive", 0, "interval of SSE keep-alive comments and WebSocket pings (default 15s)")
	fs.DurationVar(&o.WriteTimeout, "write-timeout", 0, "deadline of every write to a stream (default 10s)")
	fs.DurationVar(&o.BodyTimeout, "body-timeout", 0, "time to read a send request's body; a slower client is cut with 408 (default 10s; streams are not bounded by it)")
	fs.DurationVar(&o.ReadHeaderTimeout, "read-header-timeout", 0, "time to read a request's headers (default 10s)")
	fs.DurationVar(&o.IdleTimeout, "idle-timeout", 0, "how long an idle keep-alive connection stays open (default 120s)")
	fs.StringVar(&o.NATS.URLs, "nats", "", "serve one chat from several nodes: the NATS servers (with JetStream) to join, nats://host:4222[,nats://host2:4222...]; the chat's events, mailboxes and presence then live in JetStream and -data is unused (default: this node alone, its own store)")
	fs.DurationVar(&o.NATS.NodeTTL, "nats-node-ttl", 0, "with -nats: how long a node that stopped renewing its key keeps its users' streams before another node declares it gone (default 10s)")
	fs.Var(&origins, "allow-origin", "a WebSocket Origin accepted besides this server's own (repeatable; * for any)")
	fs.Func("allow-host", "a Host name served besides those of the listen address, e.g. chat.example.org or *.example.org (repeatable; bound to loopback, only loopback names are served otherwise)", func(v string) error {
		if err := httpguard.CheckHostName(v); err != nil {
			return err
		}
		o.AllowedHosts = append(o.AllowedHosts, v)
		return nil
	})
	return func(verbose bool) (chatserver.Options, error) {
		if *auth {
			secret, err := readSecret(*secretFile)
			if err != nil {
				return o, fmt.Errorf("--auth: %w", err)
			}
			o.AuthSecret = secret
		} else if *secretFile != "" {
			return o, errors.New("--auth-secret-file is the secret of --auth: give --auth too")
		}
		if *auth && o.ClaimNicks {
			return o, errors.New("--auth and --claim-nicks exclude each other: with --auth a token already binds its nickname")
		}
		if _, err := httpguard.NewProxies(nil, o.ProxyHeader); err != nil {
			return o, fmt.Errorf("--proxy-header: %w", err)
		}
		o.AllowedOrigins = origins
		level := slog.LevelWarn
		if verbose {
			level = slog.LevelInfo
		}
		o.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
		return o, nil
	}
}

// secretEnv holds the chat's token secret when no --auth-secret-file is given.
const secretEnv = "WASMGAP_CHAT_SECRET"

func addSecretFlag(fs *flag.FlagSet) *string {
	return fs.String("auth-secret-file", "", "file holding the secret that signs connection tokens (at least 32 bytes; default: $"+secretEnv+")")
}

// readSecret reads the token secret from file, or from $WASMGAP_CHAT_SECRET when
// file is "": its bytes, a final newline dropped.
func readSecret(file string) ([]byte, error) {
	var b []byte
	from := "$" + secretEnv
	if file != "" {
		var err error
		if b, err = os.ReadFile(file); err != nil {
			return nil, fmt.Errorf("the token secret cannot be read: %v", err)
		}
		from = file
	} else {
		b = []byte(os.Getenv(secretEnv))
		if len(b) == 0 {
			return nil, fmt.Errorf("no token secret: give --auth-secret-file FILE or set $%s (at least %d bytes, e.g. head -c 48 /dev/urandom | base64)", secretEnv, chatserver.MinSecretBytes)
		}
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) < chatserver.MinSecretBytes {
		return nil, fmt.Errorf("the token secret in %s has %d bytes: give at least %d (e.g. head -c 48 /dev/urandom | base64)", from, len(b), chatserver.MinSecretBytes)
	}
	return b, nil
}

// authBanner says how the chat knows who speaks, for its banner.
func authBanner(o chatserver.Options) string {
	switch {
	case o.AuthSecret != nil:
		return "users authenticated by connection tokens (--auth)"
	case o.ClaimNicks:
		return "open, nicknames claimed by their first login (--claim-nicks)"
	}
	return "open: a nickname is a name, not an identity"
}

// runChatToken is `wasmgap chat token [--ttl 24h] NICK`: it prints a connection token
// of NICK signed with the chat's secret.
func runChatToken(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap chat token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: wasmgap chat token [flags] NICK\n\nPrints a connection token that logs in and sends as NICK on a chat started with --auth\n"+
			"and the same secret (--auth-secret-file or $%s). Pass it to the page as ?token=<token>\n"+
			"(or #token=<token>), to curl as -H 'Authorization: Bearer <token>'.\n\nflags:\n", secretEnv)
		fs.PrintDefaults()
	}
	ttl := fs.Duration("ttl", 24*time.Hour, "how long the token is valid (at most 366 days)")
	secretFile := addSecretFlag(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	rest := fs.Args()
	if len(rest) > 1 {
		// Flags after the nickname: wasmgap chat token bob --ttl 1h.
		if code, ok := parseFlags(fs, rest[1:], stdout, stderr); !ok {
			return code
		}
		rest = append(rest[:1], fs.Args()...)
	}
	if len(rest) != 1 {
		return exitf(stderr, 2, "wasmgap chat token: give one nickname, got %d arguments %q", len(rest), rest)
	}
	secret, err := readSecret(*secretFile)
	if err != nil {
		return exitf(stderr, 2, "wasmgap chat token: %v", err)
	}
	tok, err := chatserver.MintToken(secret, rest[0], *ttl, time.Now())
	if err != nil {
		return exitf(stderr, 2, "wasmgap chat token: %v", err)
	}
	fmt.Fprintln(stdout, tok)
	return 0
}
