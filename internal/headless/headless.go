// Package headless starts the headless browsers the project drives — Debian's chromium
// through the DevTools protocol (chromedp), Debian's firefox-esr through WebDriver BiDi
// (package internal/bidi) — behind one small interface: navigate, evaluate JavaScript (with
// await), the console's errors, the viewport's size, the browser's version, close. The browser engines
// (internal/engine/browser) and the page's browser tests (internal/browsertest) both start theirs
// here.
//
// Each browser runs with a fresh profile in a directory of its own, with no network of its
// own (no updates, telemetry, safe-browsing lists or captive-portal checks), in a process
// group of its own that dies with this process on Linux (internal/childproc); Close kills
// the whole group and removes the profile. A process killed before it closed its browsers
// (a runner's worker ended at its time limit, or by the parent-death signal) leaves their
// profiles in a folder named after it, which the next Start of any process removes.
package headless

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wasmgap/wasmgap/internal/childproc"
	"github.com/wasmgap/wasmgap/internal/procfs"
)

// Kind names a browser.
type Kind string

// The browsers.
const (
	Chromium Kind = "chromium"
	Firefox  Kind = "firefox"
)

// Kinds lists the browsers in the order tests and reports take them.
func Kinds() []Kind { return []Kind{Chromium, Firefox} }

// Page is one tab of a running browser.
type Page interface {
	// Navigate loads url and waits for its load event.
	Navigate(ctx context.Context, url string) error
	// Evaluate runs the JavaScript expression, awaits it if it is a promise, and decodes
	// its value (as JSON.stringify gives it) into out; nil discards it.
	Evaluate(ctx context.Context, expression string, out any) error
	// ConsoleErrors are the console.error calls and uncaught exceptions seen so far.
	ConsoleErrors() []string
	// SetViewport sets the page's layout viewport to width × height CSS pixels (the
	// window.innerWidth and innerHeight the page sees), as a narrower or wider screen would.
	SetViewport(ctx context.Context, width, height int) error
	// Version is the browser's name and version, with its JavaScript engine: "Chromium
	// 156.0.8078.114 (V8 15.6.1)", "Firefox 153.8.0esr (SpiderMonkey)".
	Version() string
	// Kind is the browser.
	Kind() Kind
	// Pid is the browser's main process id.
	Pid() int
	// Close ends the browser (its whole process group) and removes its profile.
	Close() error
}

// packages say what to install for each browser, as a missing browser's error says.
var packages = map[Kind]string{Chromium: "apt-get install chromium", Firefox: "apt-get install firefox-esr"}

// executables are the names looked up on PATH, in order.
var executables = map[Kind][]string{
	Chromium: {"chromium", "chromium-browser", "google-chrome"},
	Firefox:  {"firefox-esr", "firefox"},
}

// ErrNotInstalled is returned (wrapped) by Path and Start when the browser is missing.
var ErrNotInstalled = errors.New("not installed")

// Path returns the browser's executable, or an error that says what to install.
func Path(kind Kind) (string, error) {
	names, ok := executables[kind]
	if !ok {
		return "", fmt.Errorf("unknown browser %q: valid browsers are chromium, firefox", kind)
	}
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s %w: %s", kind, ErrNotInstalled, packages[kind])
}

// Options say how to start a browser.
type Options struct {
	// Dir is where the profile directory is made; "" means this process's folder of
	// profiles in os.TempDir() (see profilesPrefix).
	Dir string
	// Timeout bounds the start (the browser's first answer) on an idle machine; zero means
	// a minute. A busy machine stretches it (startTimeout).
	Timeout time.Duration
	// ChromiumFlags adds flags to Chromium's (a window size, say); Firefox ignores them.
	ChromiumFlags []chromedp.ExecAllocatorOption
}

// Start launches the browser headless with a fresh profile and returns its first tab.
func Start(ctx context.Context, kind Kind, opts Options) (Page, error) {
	path, err := Path(kind)
	if err != nil {
		return nil, err
	}
	profile, err := makeProfile(kind, opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("make a profile for %s: %w", kind, err)
	}
	startCtx, cancel := context.WithTimeout(ctx, startTimeout(opts.Timeout, loadPerCPU()))
	defer cancel()
	var p Page
	switch kind {
	case Chromium:
		p, err = startChromium(startCtx, path, profile, opts.ChromiumFlags)
	case Firefox:
		p, err = startFirefox(startCtx, path, profile)
	}
	if err != nil {
		removeProfile(profile)
		return nil, err
	}
	return p, nil
}

// profilesPrefix names the folder in os.TempDir() that holds the profiles of the browsers
// a process starts with Options.Dir "", the process's id after it. Close removes a
// browser's profile, and the folder once it is empty; a killed process closes nothing, so
// Start removes the folders of processes that have ended.
const profilesPrefix = "wasmgap-browsers-"

// profilesMu orders the making of a profile in this process's folder against the removal
// of the folder once it is empty.
var profilesMu sync.Mutex

// makeProfile makes a fresh profile directory for the browser in dir, or, when dir is "",
// in this process's folder of profiles, first removing those of processes that have ended.
func makeProfile(kind Kind, dir string) (string, error) {
	if dir == "" {
		profilesMu.Lock()
		defer profilesMu.Unlock()
		removeEndedProfiles()
		dir = filepath.Join(os.TempDir(), profilesPrefix+strconv.Itoa(os.Getpid()))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", err
		}
	}
	return os.MkdirTemp(dir, "wasmgap-"+string(kind)+"-")
}

// removeProfile removes a browser's profile, and this process's folder of profiles when
// that was the last one in it.
func removeProfile(profile string) error {
	err := os.RemoveAll(profile)
	if dir := filepath.Dir(profile); filepath.Base(dir) == profilesPrefix+strconv.Itoa(os.Getpid()) {
		profilesMu.Lock()
		os.Remove(dir) // fails, as it should, while another browser's profile is in it
		profilesMu.Unlock()
	}
	return err
}

// removeEndedProfiles removes the folders of profiles of processes that have ended.
func removeEndedProfiles() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), profilesPrefix+"*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), profilesPrefix))
		if err == nil && pid != os.Getpid() && ended(pid) {
			os.RemoveAll(d)
		}
	}
}

// ended reports whether the process has ended: it is gone, or a zombie (which no init
// reaps in some containers).
func ended(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	st, err := procfs.ReadStat(pid)
	return err == nil && st.State == 'Z'
}

// process is a started browser: its command, the tail of its stderr, and the endpoint it
// printed there.
type process struct {
	cmd     *exec.Cmd
	profile string
	stderr  *tail
	waited  chan struct{}
	once    sync.Once
}

// launch starts the browser and waits for the line of its stderr that matches endpoint,
// returning the line's first group (the WebSocket URL).
func launch(ctx context.Context, name, path, profile string, args []string, endpoint *regexp.Regexp) (*process, string, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), "HOME="+profile, "MOZ_CRASHREPORTER_DISABLE=1", "MOZ_HEADLESS=1")
	cmd.Stdout = io.Discard
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := childproc.Start(cmd); err != nil {
		return nil, "", fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{cmd: cmd, profile: profile, stderr: &tail{max: 16 << 10}, waited: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			p.stderr.add(line)
			if m := endpoint.FindStringSubmatch(line); !sent && m != nil {
				found <- m[1]
				sent = true
			}
		}
		io.Copy(io.Discard, pipe)
		cmd.Wait()
		close(p.waited)
	}()
	select {
	case url := <-found:
		return p, url, nil
	case <-p.waited:
		return nil, "", fmt.Errorf("%s exited before it listened: %s", name, p.stderr.String())
	case <-ctx.Done():
		p.kill()
		return nil, "", fmt.Errorf("%s did not listen within the time limit (%w): %s", name, ctx.Err(), p.stderr.String())
	}
}

// kill ends the browser's process group, waits for it and removes the profile.
func (p *process) kill() {
	p.once.Do(func() {
		childproc.KillGroup(p.cmd)
		select {
		case <-p.waited:
		case <-time.After(30 * time.Second):
		}
		removeProfile(p.profile)
	})
}

// tail keeps the last bytes of a stream's lines.
type tail struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.WriteString(line)
	t.buf.WriteByte('\n')
	if t.buf.Len() > t.max {
		b := t.buf.Bytes()[t.buf.Len()-t.max:]
		t.buf = *bytes.NewBuffer(append([]byte(nil), b...))
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(t.buf.String())
}

// errors keeps a page's console errors.
type consoleErrors struct {
	mu   sync.Mutex
	list []string
}

func (c *consoleErrors) add(s string) {
	c.mu.Lock()
	c.list = append(c.list, s)
	c.mu.Unlock()
}

func (c *consoleErrors) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.list...)
}

// decodeJSON decodes the JSON text a page returned into out.
func decodeJSON(text string, out any) error {
	if err := json.Unmarshal([]byte(text), out); err != nil {
		return fmt.Errorf("decode the value the page returned (%.200s): %w", text, err)
	}
	return nil
}

// maxStretch bounds how far a busy machine stretches a start's time limit.
const maxStretch = 20

// startTimeout is the time limit of a browser's start: timeout (a minute when zero) times
// the machine's load per core when it is above 1, at most maxStretch times. A browser's
// start is seconds of CPU work, and a machine whose run queue holds N tasks per core gives
// it about 1/N of a core: a wall-clock limit fit for an idle machine fails a healthy start
// on a busy one (two browsers starting beside a test suite), while a hung browser is still
// stopped, later.
func startTimeout(timeout time.Duration, loadPerCPU float64) time.Duration {
	if timeout <= 0 {
		timeout = time.Minute
	}
	return time.Duration(float64(timeout) * min(max(loadPerCPU, 1), maxStretch))
}

// loadPerCPU is the one-minute load average per core, 0 where it is unknown.
func loadPerCPU() float64 {
	l, err := procfs.ReadLoad()
	if err != nil {
		return 0
	}
	return l.One / float64(runtime.NumCPU())
}
