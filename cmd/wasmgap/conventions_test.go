package main

import (
	"bytes"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/kernels"
)

// Every command, with the words that open its help.
var helpOf = map[string]string{
	"serve":           "usage: wasmgap serve",
	"chat":            "usage: wasmgap chat",
	"bench":           "usage: wasmgap bench",
	"compare":         "usage: wasmgap compare",
	"explain":         "usage: wasmgap explain",
	"warmup":          "usage: wasmgap warmup",
	"load":            "usage:",
	"load chat-send":  "usage:",
	"load ws-fanout":  "usage:",
	"load sse-fanout": "usage:",
	"load seed":       "usage:",
	"results":         "usage: wasmgap results",
	"results list":    "usage: wasmgap results list",
	"results show":    "usage: wasmgap results show",
	"results compare": "usage: wasmgap results compare",
	"results export":  "usage: wasmgap results export",
	"results delete":  "usage: wasmgap results delete",
	"version":         "usage: wasmgap version",
}

// Every command of the command table has its help in helpOf: a new one is tested too.
func TestHelpOfEveryCommand(t *testing.T) {
	for name := range commands {
		if _, ok := helpOf[name]; !ok {
			t.Errorf("command %s has no entry in helpOf", name)
		}
	}
	for name := range resultsCommands {
		if _, ok := helpOf["results "+name]; !ok {
			t.Errorf("command results %s has no entry in helpOf", name)
		}
	}
}

// `wasmgap help bench` prints bench's help, as `wasmgap bench -h` does; an unknown
// command after help is an error that lists the commands.
func TestHelpCommand(t *testing.T) {
	for _, cmd := range []string{"bench", "load", "results", "compare"} {
		var want, got, stderr bytes.Buffer
		run([]string{cmd, "-h"}, &want, &stderr)
		if code := run([]string{"help", cmd}, &got, &stderr); code != 0 || got.String() != want.String() || stderr.Len() != 0 {
			t.Errorf("wasmgap help %s: exit %d, stdout %.60q, stderr %q; want %s -h's help", cmd, code, got.String(), stderr.String(), cmd)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"help", "nosuch"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "commands:") {
		t.Errorf("wasmgap help nosuch: exit %d, stderr %q", code, stderr.String())
	}
	stdout.Reset()
	if code := run([]string{"results", "help", "list"}, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "usage: wasmgap results list") {
		t.Errorf("wasmgap results help list: exit %d, stdout %.60q", code, stdout.String())
	}
}

// A boolean flag's help shows no argument: the flag package takes a back-quoted word in a
// usage as the flag's argument name ("-compare-last wasmgap compare").
func TestBoolFlagsShowNoArgument(t *testing.T) {
	var stdout, stderr bytes.Buffer
	run([]string{"bench", "-h"}, &stdout, &stderr)
	for _, name := range []string{"compare-last", "no-save", "all", "cold", "history", "allow-failures"} {
		found := false
		for _, line := range strings.Split(stdout.String(), "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == "-"+name {
				found = true
				if len(f) != 1 {
					t.Errorf("bench -h shows %q: a boolean flag takes no argument", line)
				}
			}
		}
		if !found {
			t.Errorf("bench -h lacks -%s", name)
		}
	}
}

// load with a word that is neither a scenario nor a URL names the scenarios.
func TestLoadUnknownScenario(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"load", "nosuchscenario", "-n", "1"}, &stdout, &stderr)
	for _, want := range []string{`"nosuchscenario" is neither a scenario nor a URL`, "chat-send, sse-fanout, ws-fanout, churn, seed", "http://"} {
		if code != 2 || !strings.Contains(stderr.String(), want) {
			t.Errorf("load nosuchscenario: exit %d, stderr %q; want 2 and %q", code, stderr.String(), want)
		}
	}
}

// Flags may follow the positional arguments; after "--" everything is positional.
func TestFlagsAfterArguments(t *testing.T) {
	fs := flag.NewFlagSet("wasmgap test", flag.ContinueOnError)
	format := fs.String("format", "table", "")
	verbose := fs.Bool("v", false, "")
	var stdout, stderr bytes.Buffer
	for _, c := range []struct {
		args       []string
		format     string
		verbose    bool
		positional []string
	}{
		{[]string{"a.json", "b.json", "--format", "markdown"}, "markdown", false, []string{"a.json", "b.json"}},
		{[]string{"a.json", "-v", "b.json"}, "table", true, []string{"a.json", "b.json"}},
		{[]string{"--format=json", "a.json", "--", "-v", "b.json"}, "json", false, []string{"a.json", "-v", "b.json"}},
	} {
		*format, *verbose = "table", false
		if code, ok := parseFlags(fs, c.args, &stdout, &stderr); !ok {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr.String())
		}
		if *format != c.format || *verbose != c.verbose || !slices.Equal(fs.Args(), c.positional) {
			t.Errorf("%v: format %q, -v %v, args %q; want %q, %v, %q", c.args, *format, *verbose, fs.Args(), c.format, c.verbose, c.positional)
		}
	}
}

// Without a module version or a commit (go build -buildvcs=false, a test binary), the
// version says when the binary was built, never "(devel)" alone.
func TestVersionWithoutVCS(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--version"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	got := stdout.String()
	if strings.Contains(got, "(devel)") || !regexp.MustCompile(`^wasmgap (v\S+|[0-9a-f]{12}(\+dirty)?, committed \S+|devel, built \d{4}-\d\d-\d\dT\S+) go1\.`).MatchString(got) {
		t.Errorf("--version says %q: want a module version, a commit with its time, or when it was built", got)
	}
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
		"serve --timeout 2h",
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
