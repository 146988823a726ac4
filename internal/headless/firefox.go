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

// firefox is a Firefox driven through WebDriver BiDi.
type firefox struct {
	proc    *process
	conn    *bidi.Conn
	tab     string
	version string
	console consoleErrors

	mu   sync.Mutex
	tabs map[string]*firefoxWindow // the windows OpenWindow opened, by browsing context
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
	f := &firefox{proc: proc}
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
	if f.tab, err = f.conn.TopContext(ctx); err != nil {
		return fail(err)
	}
	return f, nil
}

func (f *firefox) Navigate(ctx context.Context, url string) error {
	return f.conn.Navigate(ctx, f.tab, url)
}

func (f *firefox) Evaluate(ctx context.Context, expression string, out any) error {
	return f.conn.Evaluate(ctx, f.tab, expression, out)
}

func (f *firefox) SetViewport(ctx context.Context, width, height int) error {
	return f.conn.SetViewport(ctx, f.tab, width, height)
}

func (f *firefox) ConsoleErrors() []string { return f.console.get() }
func (f *firefox) Version() string         { return f.version }
func (f *firefox) Kind() Kind              { return Firefox }
func (f *firefox) Pid() int                { return f.proc.cmd.Process.Pid }

// Close ends the session, then the browser's whole process group (its content processes
// are in it), and removes the profile.
func (f *firefox) Close() error {
	f.conn.Close()
	f.proc.kill()
	return nil
}

// logged keeps a console error for the page it came from: the first tab's, or the window
// OpenWindow opened for its browsing context. An error whose context is none of them (a
// worker's, where Firefox names no context) goes to every page, so that none is missed.
func (f *firefox) logged(e bidi.LogEntry) {
	if e.Level != "error" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, ok := f.tabs[e.Source.Context]; ok {
		t.console.add(e.Text)
		return
	}
	if e.Source.Context == f.tab {
		f.console.add(e.Text)
		return
	}
	f.console.add(e.Text)
	for _, t := range f.tabs {
		t.console.add(e.Text)
	}
}

// OpenWindow opens a new window in the Firefox of p (a Page that Start returned), in a
// user context of its own: cookies, storage and cache apart from every other page's, as a
// browser with a fresh profile would have them. A window, not a tab: a tab behind another
// is hidden, its timers and animation frames throttled to about one a second, while each
// window stays visible. Its Close closes the window and its user context, not the browser.
// Starting a browser costs Firefox about 2.5 s and as much CPU; a window, milliseconds.
// Chromium's pages are refused.
func OpenWindow(ctx context.Context, p Page) (Page, error) {
	f, ok := p.(*firefox)
	if !ok {
		return nil, fmt.Errorf("headless: OpenWindow takes a Firefox page, not %s's", p.Kind())
	}
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
	t := &firefoxWindow{f: f, tab: created.Context, userContext: uc.UserContext}
	f.mu.Lock()
	if f.tabs == nil {
		f.tabs = map[string]*firefoxWindow{}
	}
	f.tabs[t.tab] = t
	f.mu.Unlock()
	return t, nil
}

// removeUserContext closes a user context and its tabs, bounded by a short wait.
func (f *firefox) removeUserContext(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return f.conn.Call(ctx, "browser.removeUserContext", map[string]any{"userContext": id}, nil)
}

// firefoxWindow is a window OpenWindow opened: the browser's, with a browsing and a user
// context of its own.
type firefoxWindow struct {
	f                *firefox
	tab, userContext string
	console          consoleErrors
}

func (t *firefoxWindow) Navigate(ctx context.Context, url string) error {
	return t.f.conn.Navigate(ctx, t.tab, url)
}

func (t *firefoxWindow) Evaluate(ctx context.Context, expression string, out any) error {
	return t.f.conn.Evaluate(ctx, t.tab, expression, out)
}

func (t *firefoxWindow) SetViewport(ctx context.Context, width, height int) error {
	return t.f.conn.SetViewport(ctx, t.tab, width, height)
}

func (t *firefoxWindow) ConsoleErrors() []string { return t.console.get() }
func (t *firefoxWindow) Version() string         { return t.f.version }
func (t *firefoxWindow) Kind() Kind              { return Firefox }
func (t *firefoxWindow) Pid() int                { return t.f.Pid() }

// Close closes the window and its user context; the browser goes on.
func (t *firefoxWindow) Close() error {
	t.f.mu.Lock()
	delete(t.f.tabs, t.tab)
	t.f.mu.Unlock()
	return t.f.removeUserContext(t.userContext)
}
