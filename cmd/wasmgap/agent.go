package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"

	"github.com/wasmgap/wasmgap/internal/farm"
)

// natsTokenEnv names the environment variable that holds the NATS token, so that it is
// never seen in a process list.
const natsTokenEnv = "WASMGAP_NATS_TOKEN"

// natsFlags are the flags of a farm's NATS client: the server and how to authenticate.
type natsFlags struct {
	url, nkey, creds *string
}

func addNATSFlags(fs *flag.FlagSet, urlName, urlUsage string) *natsFlags {
	return &natsFlags{
		url:   fs.String(urlName, "", urlUsage),
		nkey:  fs.String("nkey", "", "authenticate to the farm's NATS server with the nkey seed in this file (see docs/FARM.md)"),
		creds: fs.String("creds", "", "authenticate to the farm's NATS server with this credentials file (JWT and seed)"),
	}
}

// auth is how the client authenticates: the nkey or credentials file, or the token in
// $WASMGAP_NATS_TOKEN.
func (n *natsFlags) auth() farm.Auth {
	return farm.Auth{Token: os.Getenv(natsTokenEnv), NkeyFile: *n.nkey, CredsFile: *n.creds}
}

func runAgent(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nf := addNATSFlags(fs, "nats", "the farm's NATS server, nats://host:port (required)")
	name := fs.String("name", "", "the agent's name in the farm and the results store: letters, digits, - and _ (default: the host name)")
	var engines listFlag
	fs.Var(&engines, "engine", "an engine this agent offers (repeatable; default: every engine installed on this machine: those built in, and those whose runtime or browser is found)")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: wasmgap agent --nats URL [--nkey FILE | --creds FILE] [--name NAME] [--engine E]...")
		fmt.Fprintln(w, "\nOne per machine of a bench farm: registers this machine (CPU, cores, memory, OS, kernel, engines)")
		fmt.Fprintln(w, "with the NATS server and runs the cells that `wasmgap bench --farm` publishes, one at a time,")
		fmt.Fprintln(w, "each in a worker as bench runs it. A token is read from $"+natsTokenEnv+". SIGINT or SIGTERM")
		fmt.Fprintln(w, "hands the cell in flight back to the farm and stops. docs/FARM.md describes a farm.")
		fmt.Fprintln(w)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return exitf(stderr, 2, "wasmgap agent: unexpected arguments %q", fs.Args())
	}
	if *nf.url == "" {
		return exitf(stderr, 2, "wasmgap agent: --nats is required: the farm's NATS server, nats://host:port")
	}
	if *name == "" {
		host, _ := os.Hostname()
		*name = strings.Trim(regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(host, "-"), "-")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(stderr, nil))
	err := farm.RunAgent(ctx, farm.AgentConfig{URL: *nf.url, Auth: nf.auth(), Name: *name, Engines: engines, Log: log})
	if err != nil {
		return exitf(stderr, 1, "wasmgap agent: %v", err)
	}
	return 0
}
