package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/chatserver"
	"github.com/wasmgap/wasmgap/load"
)

// chatTargets names the chat's URL at the default addresses of wasmgap chat and serve.
const chatTargets = "http://" + chatAddr + "/ (wasmgap chat's default) or http://" + serveAddr + "/chat/ (wasmgap serve's)"

func runLoadScenario(name string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap load "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), loadUsage, "\nflags for ", name, ":\n")
		fs.PrintDefaults()
	}
	o := load.ScenarioOptions{Scenario: name}
	var out outputFlags
	var targets targetFlags
	fs.Var(&targets, "target", "the chat's base URL: "+chatTargets+"; repeat it or give a comma list for several nodes: receivers and sends are spread round-robin")
	switch name {
	case load.ScenarioChatSend:
		fs.IntVar(&o.Receivers, "k", 10, "receivers logged in")
		fs.StringVar(&o.Transport, "transport", "sse", "how receivers read: sse or ws")
		fs.IntVar(&o.Senders, "senders", 10, "distinct sender nicknames (the chat limits each one's send rate)")
		fs.IntVar(&o.Concurrency, "c", 0, "sends in flight (0: one per sender)")
	case load.ScenarioChurn:
		fs.StringVar(&o.Transport, "transport", "ws", "how users log in: ws or sse")
	default:
		fs.IntVar(&o.Receivers, "s", 100, "subscribers logged in")
	}
	if name != load.ScenarioChatSend {
		fs.StringVar(&o.Server, "server", load.ServerWasmgap, "the kind of server at --target: wasmgap, or centrifugo (Centrifugo's JSON protocol over WebSocket, its uni-directional SSE, publishes through its server API)")
		fs.StringVar(&o.Centrifugo.APIKey, "centrifugo-api-key", "", "with --server centrifugo: the key of its server API (http_api.key)")
		fs.StringVar(&o.Centrifugo.TokenSecret, "centrifugo-secret", "", "with --server centrifugo: the HMAC secret of its connection tokens (client.token.hmac_secret_key)")
		fs.StringVar(&o.Centrifugo.Channel, "centrifugo-channel", load.DefaultCentrifugoChannel, "with --server centrifugo: the channel to subscribe and publish in")
	}
	fs.IntVar(&o.Messages, "n", 0, "messages to send, churn: logins (0: bounded by -d only)")
	fs.DurationVar(&o.Duration, "d", 0, "sending time (0: bounded by -n only)")
	fs.Float64Var(&o.Rate, "R", 0, "messages per second in total, churn: logins per second (0: as fast as the server answers; churn needs it)")
	fs.DurationVar(&o.Ramp, "ramp", 0, "ramp the send rate up linearly from 0 to -R over this long, then hold it (0: -R from the start)")
	fs.StringVar(&o.SendVia, "send-via", "post", "post (POST /send) or get (GET /msg/<from>/<to>%20<text>, as the article's ab run)")
	fs.DurationVar(&o.Drain, "drain", load.DefaultDrain, "wait this long after the last send for missing deliveries")
	fs.IntVar(&o.LoginConcurrency, "login-concurrency", load.DefaultLoginConcurrency, "receivers logging in at once (dialled, not yet welcomed; churn: not yet logged out)")
	fs.Float64Var(&o.LoginRate, "login-rate", 0, "receivers logging in per second (0: as fast as --login-concurrency allows)")
	fs.DurationVar(&o.LoginTime, "login-time", 0, "time for all receivers to be welcomed; past it nothing is sent and the report says how many were (0: --timeout plus 1 ms per receiver)")
	fs.DurationVar(&o.Timeout, "timeout", load.DefaultTimeout, "timeout of each send and each login")
	fs.DurationVar(&o.MaxTime, "max-time", load.DefaultMaxTime, "hard cap on the whole run")
	fs.IntVar(&o.Pid, "pid", 0, "sample this process's RSS and CPU during the run (Linux)")
	out.register(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "wasmgap load %s: "+format+"\n", append([]any{name}, a...)...)
		return 2
	}
	if fs.NArg() != 0 {
		return fail("unexpected arguments %q: give the chat's URL with --target", fs.Args())
	}
	if len(targets) == 0 {
		return fail("--target is required: the chat's base URL, %s", chatTargets)
	}
	if len(targets) == 1 {
		o.Target = targets[0]
	} else {
		o.Targets = targets
	}
	if o.LoginConcurrency < 1 {
		return fail("--login-concurrency %d: want 1 or more", o.LoginConcurrency)
	}
	if err := out.check(); err != nil {
		return fail("%v", err)
	}
	if o.Messages == 0 && o.Duration == 0 {
		return fail("refusing an unbounded run: give -n (messages), -d (duration) or both")
	}
	if err := o.Validate(); err != nil {
		return fail("%v", err)
	}
	progress, clear := out.bar(stderr)
	o.Progress = progress
	ctx, stop := interruptible()
	defer stop()
	rep, err := load.RunScenario(ctx, o)
	clear()
	if err != nil {
		return exitf(stderr, 1, "wasmgap load %s: %v", name, err)
	}
	if err := out.write(stdout, rep); err != nil {
		return exitf(stderr, 1, "wasmgap load %s: write report: %v", name, err)
	}
	if rep.Delivery == nil { // churn
		return requestsFailed("wasmgap load "+name, rep, stderr)
	}
	if d := rep.Delivery; d.Welcomed < d.Receivers {
		fmt.Fprintf(stderr, "wasmgap load %s: only %d of %d receivers were welcomed within %s (--login-time)\n",
			name, d.Welcomed, d.Receivers, d.LoginTime)
		return 4
	}
	if rep.Delivery.Lost > 0 {
		return 3 // the chat lost messages: make scripts notice
	}
	return 0
}

// targetFlags collects --target, repeated or as comma lists.
type targetFlags []string

func (t *targetFlags) String() string { return strings.Join(*t, ",") }
func (t *targetFlags) Set(v string) error {
	for _, u := range strings.Split(v, ",") {
		if u = strings.TrimSpace(u); u == "" {
			return fmt.Errorf("empty URL in %q", v)
		}
		*t = append(*t, u)
	}
	return nil
}

func runLoadSeed(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap load seed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		target string
		out    outputFlags
		o      load.SeedOptions
	)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), loadUsage, "\nflags for seed:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&target, "target", "", "the chat's base URL (empty: start the chat in this process on 127.0.0.1)")
	fs.IntVar(&o.Scale, "scale", 1, "divide the articles' request counts by this, for a quick run")
	fs.IntVar(&o.Pid, "pid", 0, "sample this process's RSS and CPU during each run (Linux)")
	fs.DurationVar(&o.MaxTime, "max-time", load.DefaultMaxTime, "hard cap on each run")
	out.register(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() != 0 {
		return exitf(stderr, 2, "wasmgap load seed: unexpected arguments %q", fs.Args())
	}
	if err := out.check(); err != nil {
		return exitf(stderr, 2, "wasmgap load seed: %v", err)
	}
	if o.Scale < 1 {
		return exitf(stderr, 2, "wasmgap load seed: --scale %d: want 1 or more", o.Scale)
	}
	ctx, stop := interruptible()
	defer stop()
	o.Target, o.Server = target, "the chat at "+target
	if target == "" {
		url, shutdown, err := startInProcessChat()
		if err != nil {
			return exitf(stderr, 1, "wasmgap load seed: %v", err)
		}
		defer shutdown()
		o.Target = url
		o.Server = "wasmgap chat, in this process"
	}
	if bar, clear := out.bar(stderr); bar != nil {
		o.Progress = func(p load.SeedProgress) { bar(p.Progress) }
		defer clear()
	}
	rep, err := load.RunSeed(ctx, o)
	if err != nil {
		return exitf(stderr, 1, "wasmgap load seed: %v", err)
	}
	if out.format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = load.WriteSeedText(stdout, rep)
	}
	if err != nil {
		return exitf(stderr, 1, "wasmgap load seed: write report: %v", err)
	}
	return 0
}

// startInProcessChat serves a fresh chat (temporary store, no send limit: the article's ab
// runs send 10,000 messages from one nickname) on a loopback port.
func startInProcessChat() (string, func(), error) {
	dir, err := os.MkdirTemp("", "wasmgap-load-seed-")
	if err != nil {
		return "", nil, fmt.Errorf("temporary chat store: %w", err)
	}
	srv, err := chatserver.New(chatserver.Options{DataDir: dir, SendRate: -1})
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("start the chat: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("listen on 127.0.0.1: %w", err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String() + "/", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		hs.Shutdown(ctx)
		os.RemoveAll(dir)
	}, nil
}
