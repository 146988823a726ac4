package headless

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// open starts the browser, skipping where it is not installed (failing in CI, or with
// PEERS_REQUIRED=1 as .ci/run sets it).
func open(t *testing.T, kind Kind) Page {
	t.Helper()
	if _, err := Path(kind); errors.Is(err, ErrNotInstalled) {
		if os.Getenv("CI") != "" || os.Getenv("PEERS_REQUIRED") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	p, err := Start(context.Background(), kind, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// Each browser navigates, evaluates (a promise awaited, a value decoded), sets its
// viewport, reports console errors and thrown exceptions, says its version, and leaves no
// process behind on Close.
func TestPage(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>t</title><script>console.error("boom", 7)</script><p id=x>hello</p>`)
	}))
	defer ts.Close()
	for _, kind := range Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			p := open(t, kind)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if v := p.Version(); !strings.HasPrefix(strings.ToLower(v), string(kind)+" ") {
				t.Errorf("version %q, want %q and a number", v, string(kind)+" …")
			}
			if err := p.Navigate(ctx, ts.URL); err != nil {
				t.Fatal(err)
			}
			var got struct {
				Text string `json:"text"`
				Sum  int    `json:"sum"`
			}
			if err := p.Evaluate(ctx, `new Promise((r) => setTimeout(() => r({text: document.getElementById("x").textContent, sum: 1 + 2}), 10))`, &got); err != nil {
				t.Fatal(err)
			}
			if got.Text != "hello" || got.Sum != 3 {
				t.Errorf("evaluated %+v, want hello and 3", got)
			}
			// The viewport is what the page lays out in: innerWidth and a media query follow it.
			for _, w := range []int{800, 1280} {
				if err := p.SetViewport(ctx, w, 700); err != nil {
					t.Fatal(err)
				}
				var vp struct {
					Width  int  `json:"width"`
					Height int  `json:"height"`
					Wide   bool `json:"wide"`
				}
				if err := p.Evaluate(ctx, `({width: innerWidth, height: innerHeight, wide: matchMedia("(min-width: 1000px)").matches})`, &vp); err != nil {
					t.Fatal(err)
				}
				if vp.Width != w || vp.Height != 700 || vp.Wide != (w >= 1000) {
					t.Errorf("after SetViewport(%d, 700) the page sees %+v", w, vp)
				}
			}
			if err := p.Evaluate(ctx, `(async () => { throw new Error("thrown on purpose") })()`, nil); err == nil || !strings.Contains(err.Error(), "thrown on purpose") {
				t.Errorf("a thrown error gave %v, want its message", err)
			}
			var seen []string
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if seen = p.ConsoleErrors(); len(seen) > 0 {
					break
				}
			}
			if len(seen) == 0 || !strings.Contains(seen[0], "boom") {
				t.Errorf("console errors %q, want the page's console.error(\"boom\", 7)", seen)
			}
			pid := p.Pid()
			if pid <= 0 {
				t.Fatalf("pid %d", pid)
			}
			p.Close()
			for deadline := time.Now().Add(30 * time.Second); syscall.Kill(pid, 0) == nil && !zombie(pid); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s %d still runs 30 s after Close", kind, pid)
				}
			}
		})
	}
}

// A browser that is not installed is an error that says what to install.
func TestPathUnknown(t *testing.T) {
	if _, err := Path("netscape"); err == nil || !strings.Contains(err.Error(), "chromium, firefox") {
		t.Errorf("Path(netscape) = %v, want the valid browsers", err)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) == 0 || f[0] == "Z"
}

// OpenWindow's windows share one Firefox but nothing else: each keeps its own storage (a
// fresh profile's, as a browser of its own would), gets its own console errors, stays
// visible (its timers unthrottled) beside the others, and its Close leaves the browser and
// the other windows running. Chromium's pages are refused.
func TestOpenWindow(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>t</title><script>console.error("boom in " + %q)</script>`, r.URL.Query().Get("who"))
	}))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout(0, loadPerCPU()))
	defer cancel()
	f := open(t, Firefox)
	var tabs []Page
	for _, who := range []string{"a", "b"} {
		tab, err := OpenWindow(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		defer tab.Close()
		if err := tab.Navigate(ctx, ts.URL+"/?who="+who); err != nil {
			t.Fatal(err)
		}
		if err := tab.Evaluate(ctx, `localStorage.getItem("who") === null && (localStorage.setItem("who", `+fmt.Sprintf("%q", who)+`), true)`, nil); err != nil {
			t.Fatal(err)
		}
		tabs = append(tabs, tab)
	}
	for i, who := range []string{"a", "b"} {
		var stored string
		if err := tabs[i].Evaluate(ctx, `localStorage.getItem("who")`, &stored); err != nil || stored != who {
			t.Errorf("tab %s's storage holds %q (%v), want its own %q", who, stored, err, who)
		}
		var seen []string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if seen = tabs[i].ConsoleErrors(); len(seen) > 0 {
				break
			}
		}
		if len(seen) != 1 || !strings.Contains(seen[0], "boom in "+who) {
			t.Errorf("tab %s's console errors %q, want its own page's one", who, seen)
		}
		var visible bool
		if err := tabs[i].Evaluate(ctx, `document.visibilityState === "visible"`, &visible); err != nil || !visible {
			t.Errorf("tab %s is hidden (%v): its timers would be throttled", who, err)
		}
	}
	if err := tabs[0].Close(); err != nil {
		t.Fatal(err)
	}
	var ok bool
	if err := tabs[1].Evaluate(ctx, `true`, &ok); err != nil || !ok {
		t.Errorf("the other tab after one's Close: %v, %v", ok, err)
	}
	if err := f.Evaluate(ctx, `true`, &ok); err != nil || !ok {
		t.Errorf("the browser's first tab after a tab's Close: %v, %v", ok, err)
	}
	c := open(t, Chromium)
	if _, err := OpenWindow(ctx, c); err == nil || !strings.Contains(err.Error(), "Firefox") {
		t.Errorf("OpenWindow on Chromium = %v, want a refusal", err)
	}
}

// Start with no Dir makes the profile in a folder of this process's, which Close removes
// with the profile, and first removes the folders of processes that have ended (killed
// before they closed their browsers), keeping those of processes that run.
func TestProfilesOfEndedProcessesRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	folder := func(pid int) string { return filepath.Join(tmp, profilesPrefix+strconv.Itoa(pid)) }
	for _, pid := range []int{gone.Process.Pid, os.Getppid()} {
		if err := os.MkdirAll(filepath.Join(folder(pid), "wasmgap-firefox-1"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	profile, err := makeProfile(Chromium, "")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(profile) != folder(os.Getpid()) {
		t.Errorf("profile %s, want it in %s", profile, folder(os.Getpid()))
	}
	if _, err := os.Stat(folder(gone.Process.Pid)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the folder of an ended process is left (%v)", err)
	}
	if _, err := os.Stat(folder(os.Getppid())); err != nil {
		t.Errorf("the folder of a running process is removed: %v", err)
	}
	if err := removeProfile(profile); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(folder(os.Getpid())); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("this process's folder is left once its last profile is removed (%v)", err)
	}
}
