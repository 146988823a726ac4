package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/kernels"
)

// Every command, with the words that open its help.
var helpOf = map[string]string{
	"serve":          "usage: wasmgap serve",
	"chat":           "usage: wasmgap chat",
	"bench":          "usage: wasmgap bench",
	"compare":        "usage: wasmgap compare",
	"load":           "usage:",
	"load chat-send": "usage:",
	"load ws-fanout": "usage:",
	"load seed":      "Usage of wasmgap load seed",
}

// Help, asked for with -h or --help, goes to stdout with exit status 0, for the command
// list and for every command.
func TestHelpOnStdout(t *testing.T) {
	for _, h := range []string{"-h", "--help", "help"} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{h}, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "usage: wasmgap <command>") || stderr.Len() != 0 {
			t.Errorf("wasmgap %s: exit %d, stdout %.40q, stderr %q", h, code, stdout.String(), stderr.String())
		}
	}
	for cmd, opens := range helpOf {
		for _, h := range []string{"-h", "--help"} {
			var stdout, stderr bytes.Buffer
			code := run(append(strings.Fields(cmd), h), &stdout, &stderr)
			if code != 0 || !strings.HasPrefix(stdout.String(), opens) || stderr.Len() != 0 {
				t.Errorf("wasmgap %s %s: exit %d, stdout %.60q, stderr %q; want 0, help on stdout opening %q", cmd, h, code, stdout.String(), stderr.String(), opens)
			}
		}
	}
	// With nothing asked, the command list is an error.
	var stdout, stderr bytes.Buffer
	if code := run(nil, &stdout, &stderr); code != 2 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "commands:") {
		t.Errorf("wasmgap alone: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

func TestVersionFlag(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "wasmgap ") || !strings.Contains(stdout.String(), "go1.") || stderr.Len() != 0 {
			t.Errorf("wasmgap %v: exit %d, stdout %q, stderr %q", args, code, stdout.String(), stderr.String())
		}
	}
}

// Every bad flag or flag value is one line on stderr, prefixed with the command, and exit
// status 2: no usage dump.
func TestBadFlagIsOneLine(t *testing.T) {
	for _, args := range []string{
		"bench --arg n=abc",
		"bench --arg n",
		"bench --runs many",
		"bench --timeout soon",
		"bench --nope",
		"serve --timeout soon",
		"serve --max-concurrent x",
		"serve --allow-host bad/host",
		"chat --queue x",
		"chat --retention soon",
		"compare --alpha x a b",
		"load -c x http://127.0.0.1:1/",
		"load chat-send -k x",
		"load chat-send --target ,",
		"load seed --scale x",
	} {
		fields := strings.Fields(args)
		prefix := "wasmgap " + fields[0] + ": "
		if fields[0] == "load" && len(fields) > 1 && !strings.HasPrefix(fields[1], "-") {
			prefix = "wasmgap load " + fields[1] + ": "
		}
		var stdout, stderr bytes.Buffer
		code := run(fields, &stdout, &stderr)
		said := stderr.String()
		if code != 2 || stdout.Len() != 0 || !strings.HasPrefix(said, prefix) || strings.Count(said, "\n") != 1 {
			t.Errorf("wasmgap %s: exit %d, stderr %q; want exit 2 and one line starting %q", args, code, said, prefix)
		}
	}
}

// bench -h names every kernel with its parameters, and every engine.
func TestBenchHelpListsNames(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"bench", "-h"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	help := stdout.String()
	for _, k := range kernels.Every() {
		if !strings.Contains(help, "  "+k.Name+" ") {
			t.Errorf("bench -h lacks kernel %s", k.Name)
		}
		for _, p := range k.Params {
			if want := fmt.Sprintf("%s=%d (%d to %d)", p.Name, p.Default, p.Min, p.Max); !strings.Contains(help, "  "+k.Name+" ") || !strings.Contains(help, want) {
				t.Errorf("bench -h lacks kernel %s with %s", k.Name, want)
			}
		}
	}
	if want := strings.Join(engine.Names(), ", "); !strings.Contains(help, want) {
		t.Errorf("bench -h lacks the engines %s", want)
	}
}

// The help of the chat scenarios names the chat's real addresses, the defaults of
// wasmgap chat and wasmgap serve.
func TestLoadHelpNamesChatAddress(t *testing.T) {
	defaults := map[string]string{}
	for _, cmd := range []string{"chat", "serve"} {
		var stdout, stderr bytes.Buffer
		run([]string{cmd, "-h"}, &stdout, &stderr)
		_, after, ok := strings.Cut(stdout.String(), "-addr string")
		if !ok {
			t.Fatalf("%s -h has no -addr flag", cmd)
		}
		_, def, _ := strings.Cut(after, `(default "`)
		defaults[cmd], _, _ = strings.Cut(def, `"`)
	}
	var stdout, stderr bytes.Buffer
	run([]string{"load", "chat-send", "-h"}, &stdout, &stderr)
	for cmd, want := range map[string]string{"chat": "http://" + defaults["chat"] + "/", "serve": "http://" + defaults["serve"] + "/chat/"} {
		if defaults[cmd] == "" || !strings.Contains(stdout.String(), want) {
			t.Errorf("load chat-send -h does not name %s's chat, %s", cmd, want)
		}
	}
}

// The CLI takes as many timed runs as the API does, runner.MaxJobRuns, and no more.
func TestBenchRunsLimit(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"bench", "--runs", fmt.Sprint(runner.MaxJobRuns + 1)}, &stdout, &stderr)
	if want := fmt.Sprintf("allowed 1 to %d", runner.MaxJobRuns); code != 2 || !strings.Contains(stderr.String(), want) {
		t.Errorf("--runs %d: exit %d, stderr %q; want 2 and %q", runner.MaxJobRuns+1, code, stderr.String(), want)
	}
}
