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
	if err := f.conn.OnLog(ctx, func(e bidi.LogEntry) {
		if e.Level == "error" {
			f.console.add(e.Text)
		}
	}); err != nil {
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
