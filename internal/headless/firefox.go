package headless

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wasmgap/wasmgap/internal/bidi"
)

// firefoxPrefs go into the profile's user.js: no updates, telemetry, studies, safe-browsing
// lists, remote settings or captive-portal and connectivity checks — nothing that reaches
// the network on its own — and no first-run pages.
var firefoxPrefs = map[string]any{
	"app.update.auto":                                    false,
	"app.update.enabled":                                 false,
	"app.update.checkInstallTime":                        false,
	"app.normandy.enabled":                               false,
	"app.shield.optoutstudies.enabled":                   false,
	"browser.aboutwelcome.enabled":                       false,
	"browser.newtabpage.enabled":                         false,
	"browser.ping-centre.telemetry":                      false,
	"browser.safebrowsing.malware.enabled":               false,
	"browser.safebrowsing.phishing.enabled":              false,
	"browser.safebrowsing.downloads.enabled":             false,
	"browser.safebrowsing.blockedURIs.enabled":           false,
	"browser.search.update":                              false,
	"browser.shell.checkDefaultBrowser":                  false,
	"browser.startup.homepage_override.mstone":           "ignore",
	"browser.startup.page":                               0,
	"browser.tabs.warnOnClose":                           false,
	"datareporting.healthreport.uploadEnabled":           false,
	"datareporting.policy.dataSubmissionEnabled":         false,
	"extensions.update.enabled":                          false,
	"extensions.getAddons.cache.enabled":                 false,
	"extensions.blocklist.enabled":                       false,
	"messaging-system.rsexperimentloader.enabled":        false,
	"network.captive-portal-service.enabled":             false,
	"network.connectivity-service.enabled":               false,
	"network.dns.disablePrefetch":                        true,
	"network.prefetch-next":                              false,
	"services.settings.server":                           "data:,#remote-settings-off",
	"toolkit.telemetry.enabled":                          false,
	"toolkit.telemetry.unified":                          false,
	"toolkit.telemetry.archive.enabled":                  false,
	"toolkit.telemetry.server":                           "data:,",
	"toolkit.startup.max_resumed_crashes":                -1,
	"browser.sessionstore.resume_from_crash":             false,
	"dom.disable_open_during_load":                       false,
	"browser.region.network.url":                         "",
	"geo.provider.network.url":                           "",
	"identity.fxaccounts.enabled":                        false,
	"browser.contentblocking.report.lockwise.enabled":    false,
	"browser.newtabpage.activity-stream.feeds.telemetry": false,
}

// userJS renders the prefs as a user.js, one user_pref line each, sorted.
func userJS() string {
	var lines []string
	for k, v := range firefoxPrefs {
		b, _ := json.Marshal(v)
		lines = append(lines, fmt.Sprintf("user_pref(%q, %s);", k, b))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

// bidiListening is the line Firefox prints when its WebDriver BiDi server listens.
var bidiListening = regexp.MustCompile(`WebDriver BiDi listening on (ws://\S+)`)

// firefox is a Firefox driven through WebDriver BiDi; as a Page, its first tab.
type firefox struct {
	window  // the first tab
	proc    *process
	conn    *bidi.Conn
	version string

	mu      sync.Mutex
	windows map[string]*window // its pages by browsing context: the first tab, and OpenWindow's
}

func startFirefox(ctx context.Context, path, profile string) (Page, error) {
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(userJS()), 0o644); err != nil {
		return nil, fmt.Errorf("write firefox's prefs: %w", err)
	}
	args := []string{"-headless", "-no-remote", "-profile", profile, "--remote-debugging-port=0", "about:blank"}
	proc, url, err := launch(ctx, "firefox", path, profile, args, bidiListening)
	if err != nil {
		return nil, err
	}
	f := &firefox{proc: proc, windows: map[string]*window{}}
	f.window.f = f
	fail := func(err error) (Page, error) {
		if f.conn != nil {
			f.conn.Close()
		}
		proc.kill()
		return nil, fmt.Errorf("start firefox: %w (its stderr: %.2000s)", err, proc.stderr.String())
	}
	if f.conn, err = bidi.Dial(ctx, url); err != nil {
		return fail(err)
	}
	f.version = "Firefox " + f.conn.Version + " (SpiderMonkey)"
	if err := f.conn.OnLog(ctx, f.logged); err != nil {
		return fail(err)
	}
	tab, err := f.conn.TopContext(ctx)
	if err != nil {
		return fail(err)
	}
	f.mu.Lock()
	f.window.context = tab
	f.windows[tab] = &f.window
	f.mu.Unlock()
	return f, nil
}

// Close ends the session, then the browser's whole process group (its content processes
// are in it), and removes the profile.
func (f *firefox) Close() error {
	f.conn.Close()
	f.proc.kill()
	return nil
}

// logged keeps a console error for the page it came from. An error whose context is none
// of them (a worker's, where Firefox names no context, or one logged before the first tab
// was known) goes to every page, so that none is missed.
func (f *firefox) logged(e bidi.LogEntry) {
	if e.Level != "error" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if w, ok := f.windows[e.Source.Context]; ok {
		w.console.add(e.Text)
		return
	}
	f.window.console.add(e.Text)
	for _, w := range f.windows {
		if w != &f.window {
			w.console.add(e.Text)
		}
	}
}

// OpenWindow opens a new window in the Firefox of p (a Page that Start returned), in a
// user context of its own: cookies, storage and cache apart from every other page's, as a
// browser with a fresh profile would have them. A window, not a tab: a tab behind another
// is hidden, its timers and animation frames throttled to about one a second, while each
// window stays visible. Its Close closes the window and its user context, not the browser.
// Starting a browser costs Firefox about 2.5 s and as much CPU; a window, milliseconds.
// Chromium's pages are refused. It is bounded as a start is (a minute, stretched by a busy
// machine's load: a first window at load 20 took over a minute) and by ctx.
func OpenWindow(ctx context.Context, p Page) (Page, error) {
	f, ok := p.(*firefox)
	if !ok {
		return nil, fmt.Errorf("headless: OpenWindow takes a Firefox page, not %s's", p.Kind())
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout(0, loadPerCPU()))
	defer cancel()
	var uc struct {
		UserContext string `json:"userContext"`
	}
	if err := f.conn.Call(ctx, "browser.createUserContext", nil, &uc); err != nil {
		return nil, err
	}
	var created struct {
		Context string `json:"context"`
	}
	if err := f.conn.Call(ctx, "browsingContext.create", map[string]any{"type": "window", "userContext": uc.UserContext}, &created); err != nil {
		f.removeUserContext(uc.UserContext)
		return nil, err
	}
	w := &window{f: f, context: created.Context, userContext: uc.UserContext}
	f.mu.Lock()
	f.windows[w.context] = w
	f.mu.Unlock()
	return w, nil
}

// removeUserContext closes a user context and its tabs, bounded by a short wait.
func (f *firefox) removeUserContext(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return f.conn.Call(ctx, "browser.removeUserContext", map[string]any{"userContext": id}, nil)
}

// window is a top-level browsing context of a Firefox: its first tab, or a window that
// OpenWindow opened in a user context of its own.
type window struct {
	f           *firefox
	context     string // its browsing context
	userContext string // OpenWindow's; "" for the first tab, which is the browser's
	console     consoleErrors
}

func (w *window) Navigate(ctx context.Context, url string) error {
	return w.f.conn.Navigate(ctx, w.context, url)
}

func (w *window) Evaluate(ctx context.Context, expression string, out any) error {
	return w.f.conn.Evaluate(ctx, w.context, expression, out)
}

func (w *window) SetViewport(ctx context.Context, width, height int) error {
	return w.f.conn.SetViewport(ctx, w.context, width, height)
}

func (w *window) ConsoleErrors() []string { return w.console.get() }
func (w *window) Version() string         { return w.f.version }
func (w *window) Kind() Kind              { return Firefox }
func (w *window) Pid() int                { return w.f.proc.cmd.Process.Pid }

// Close closes a window OpenWindow opened and its user context; the browser goes on.
// (The first tab's Close is the browser's: firefox.Close.)
func (w *window) Close() error {
	w.f.mu.Lock()
	delete(w.f.windows, w.context)
	w.f.mu.Unlock()
	return w.f.removeUserContext(w.userContext)
}
