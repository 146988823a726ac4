package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/custom"
)

const sieveSource = `package kernel

// Primes counts the primes below n.
func Primes(n int) int64 {
	composite := make([]bool, n)
	var count int64
	for i := 2; i < n; i++ {
		if !composite[i] {
			count++
			for j := i * i; j < n; j += i {
				composite[j] = true
			}
		}
	}
	return count
}
`

// customServer serves user kernels with real worker runs, its builds in a temporary
// folder and the Go cache shared by every test run. Its time limit bounds a run that
// should end, with room for a worker's start and compile on a machine with both cores
// busy; a test of the limit itself uses a server of its own with a short one.
var customServer = sync.OnceValues(func() (*Server, string) {
	dir, err := os.MkdirTemp("", "wasmgap-playground-custom-")
	if err != nil {
		panic(err)
	}
	return New(Options{
		Timeout: time.Minute,
		Custom:  custom.NewBuilder(custom.Options{Dir: dir, GoCache: filepath.Join(custom.DefaultDir(), "gocache")}),
	}), dir
})

func postCustom(t *testing.T, url, source string) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"source": source})
	resp, err := http.Post(url+"/api/custom", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// A client over its build rate gets 429 with Retry-After; a source built before is
// still answered.
func TestCustomBuildRate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	b := custom.NewBuilder(custom.Options{Dir: t.TempDir(), GoCache: filepath.Join(custom.DefaultDir(), "gocache"), BuildsPerMinute: 1})
	ts := httptest.NewServer(New(Options{Custom: b}))
	defer ts.Close()
	src := "package kernel\n\nfunc F(n int) int64 { return int64(n) }\n"
	started := time.Now()
	if status, out := postCustom(t, ts.URL, src); status != http.StatusOK {
		t.Fatalf("first build = %d %v", status, out)
	}
	if status, out := postCustom(t, ts.URL, src); status != http.StatusOK || out["cached"] != true {
		t.Errorf("the same source again = %d %v, want it cached", status, out)
	}
	if time.Since(started) >= 50*time.Second {
		// The rate counts a minute from the first build's start (buildrate_test.go holds
		// the rule on a clock of its own); a busy machine's build can outlast it.
		t.Skip("the first build took most of the rate's minute: its window cannot be seen from here")
	}
	body, _ := json.Marshal(map[string]string{"source": "package kernel\n\nfunc G(n int) int64 { return int64(n) + 1 }\n"})
	resp, err := http.Post(ts.URL+"/api/custom", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(fmt.Sprint(out["error"]), "at most 1 a minute") {
		t.Errorf("second source = %d (Retry-After %q) %v, want 429", resp.StatusCode, resp.Header.Get("Retry-After"), out)
	}
}

func TestCustomRefusals(t *testing.T) {
	ts := httptest.NewServer(New(Options{Custom: custom.NewBuilder(custom.Options{Dir: t.TempDir()})}))
	defer ts.Close()
	body := "\nfunc F(n int) int64 { return int64(n) }\n"
	for _, tc := range []struct {
		name, src string
		status    int
		line      float64
		want      string
	}{
		{"unsafe", "package kernel\n\nimport \"unsafe\"\n" + body, 422, 3, `import "unsafe" is not allowed: the allowed imports are bytes, container/heap`},
		{"os", "package kernel\n\nimport \"os\"\n" + body, 422, 3, `import "os" is not allowed`},
		{"os/exec", "package kernel\n\nimport \"os/exec\"\n" + body, 422, 3, `import "os/exec" is not allowed`},
		{"net", "package kernel\n\nimport \"net\"\n" + body, 422, 3, `import "net" is not allowed`},
		{"syscall", "package kernel\n\nimport \"syscall\"\n" + body, 422, 3, `import "syscall" is not allowed`},
		{"plugin", "package kernel\n\nimport \"plugin\"\n" + body, 422, 3, `import "plugin" is not allowed`},
		{"cgo", "package kernel\n\nimport \"C\"\n" + body, 422, 3, `import "C" is not allowed`},
		{"generate", "package kernel\n\n//go:generate touch /tmp/x\n" + body, 422, 3, "//go:generate is not allowed"},
		{"go.mod", "module example.com/evil\n\ngo 1.26\n\ntoolchain go1.99.0\n", 422, 1, "syntax error"},
		{"toolchain", "package kernel\n\ntoolchain go1.99.0\n" + body, 422, 3, "syntax error"},
		{"shape", "package kernel\n\nfunc F(s string) int64 { return 0 }\n", 422, 3, "parameter type string is not allowed"},
		{"go statement", "package kernel\n\nfunc F(n int) int64 {\n\tgo func() {}()\n\treturn 0\n}\n", 422, 4, "go statements are not allowed"},
		{"constraint", "//+build ignore\n\npackage kernel\n" + body, 422, 1, "build constraints"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := postCustom(t, ts.URL, tc.src)
			errs, _ := out["errors"].([]any)
			if status != tc.status || len(errs) == 0 || !strings.Contains(fmt.Sprint(out["error"]), tc.want) {
				t.Fatalf("POST /api/custom = %d %v, want %d with %q", status, out, tc.status, tc.want)
			}
			if first := errs[0].(map[string]any); first["line"] != tc.line {
				t.Errorf("first error at line %v, want %v", first["line"], tc.line)
			}
		})
	}
	t.Run("1 MB", func(t *testing.T) {
		status, out := postCustom(t, ts.URL, "package kernel\n//"+strings.Repeat("x", 1<<20))
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(fmt.Sprint(out["error"]), "at most 65536 bytes") {
			t.Errorf("POST /api/custom = %d %v", status, out)
		}
	})
	t.Run("content type", func(t *testing.T) {
		resp, err := http.Post(ts.URL+"/api/custom", "text/plain", strings.NewReader(`{"source":""}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("status %d", resp.StatusCode)
		}
	})
	t.Run("cross origin", func(t *testing.T) {
		req, _ := http.NewRequest("POST", ts.URL+"/api/custom", strings.NewReader(`{"source":""}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("status %d", resp.StatusCode)
		}
	})
	t.Run("unknown id", func(t *testing.T) {
		resp := postRun(t, ts.URL, `{"kernel":"custom-000000000000000000000000","engine":"yaegi"}`)
		var e apiError
		_ = json.NewDecoder(resp.Body).Decode(&e)
		if resp.StatusCode != 400 || e.Field != "kernel" || !strings.Contains(e.Error, "build it first") {
			t.Errorf("run of an unknown id: %d %+v", resp.StatusCode, e)
		}
	})
	t.Run("off", func(t *testing.T) {
		off := httptest.NewServer(New(Options{}))
		defer off.Close()
		status, out := postCustom(t, off.URL, sieveSource)
		if status != 404 || !strings.Contains(fmt.Sprint(out["error"]), "user kernels are off") {
			t.Errorf("POST /api/custom = %d %v", status, out)
		}
	})
}

// runCustom runs a user kernel on engine through POST /api/run and returns its result
// event.
func runCustom(t *testing.T, url, id, engine, args string) event {
	t.Helper()
	resp := postRun(t, url, fmt.Sprintf(`{"kernel":%q,"engine":%q,"args":%s,"runs":1,"warmup":0}`, id, engine, args))
	if resp.StatusCode != 200 {
		var e apiError
		_ = json.NewDecoder(resp.Body).Decode(&e)
		t.Fatalf("run %s on %s: %d %+v", id, engine, resp.StatusCode, e)
	}
	events := readEvents(t, resp.Body)
	last := events[len(events)-1]
	if last.Type != "result" {
		t.Fatalf("run %s on %s: last event %+v", id, engine, last)
	}
	return last
}

func TestCustomBuildAndRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command and runs workers")
	}
	s, _ := customServer()
	ts := httptest.NewServer(s)
	defer ts.Close()

	status, out := postCustom(t, ts.URL, sieveSource)
	if status != 200 {
		t.Fatalf("POST /api/custom = %d %v", status, out)
	}
	id := out["id"].(string)
	if fn := out["func"].(map[string]any); fn["name"] != "Primes" {
		t.Errorf("func = %v", fn)
	}
	// The same source again comes from the cache.
	status, again := postCustom(t, ts.URL, sieveSource)
	if status != 200 || again["id"] != id || again["cached"] != true {
		t.Errorf("second POST /api/custom = %d %v, want the cached build of %s", status, again, id)
	}
	for _, e := range custom.Engines {
		ev := runCustom(t, ts.URL, id, e, `{"n":100000}`)
		if ev.Result.Failed() || ev.Value != "9592" || ev.Result.Kernel != "Primes" {
			t.Errorf("%s: %+v", e, ev.Result)
		}
	}
	resp := postRun(t, ts.URL, fmt.Sprintf(`{"kernel":%q,"engine":"native","args":{"n":10}}`, id))
	if resp.StatusCode != 400 {
		t.Errorf("native run of a user kernel: status %d", resp.StatusCode)
	}
	resp = postRun(t, ts.URL, fmt.Sprintf(`{"kernel":%q,"engine":"yaegi","args":{"k":10}}`, id))
	var e apiError
	_ = json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != 400 || e.Field != "args.k" || !strings.Contains(e.Error, "its parameters are n") {
		t.Errorf("unknown argument: %d %+v", resp.StatusCode, e)
	}
	get, err := http.Get(ts.URL + "/api/custom/" + id)
	if err != nil {
		t.Fatal(err)
	}
	var stored customAnswer
	_ = json.NewDecoder(get.Body).Decode(&stored)
	get.Body.Close()
	if stored.Source != sieveSource {
		t.Errorf("GET /api/custom/%s: source %q", id, stored.Source)
	}

	get, err = http.Get(ts.URL + "/api/custom/" + id + "/kernel.wasm")
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	if get.StatusCode != 200 || get.Header.Get("Content-Type") != "application/wasm" {
		t.Errorf("GET kernel.wasm: %d %s", get.StatusCode, get.Header.Get("Content-Type"))
	}

	// A compiler error names its line.
	status, out = postCustom(t, ts.URL, "package kernel\n\nfunc F(n int) int64 {\n\treturn int64(n) + missing\n}\n")
	errs, _ := out["errors"].([]any)
	if status != 422 || len(errs) == 0 || errs[0].(map[string]any)["line"] != 4.0 || !strings.Contains(fmt.Sprint(out["error"]), "undefined: missing") {
		t.Errorf("compiler error: %d %v", status, out)
	}
}

func TestCustomLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command and runs workers")
	}
	s, _ := customServer()
	ts := httptest.NewServer(s)
	defer ts.Close()
	// A kernel that never ends keeps a core busy on each engine until the time limit:
	// a server with a 1 s limit (the same builder) shows the cut as 5 s would.
	short := httptest.NewServer(New(Options{Timeout: time.Second, Custom: s.opts.Custom}))
	defer short.Close()
	for _, tc := range []struct {
		url, src, args, want string
	}{
		{short.URL, "package kernel\n\nfunc Forever(n int) int64 {\n\tfor n >= 0 {\n\t\tn = n*3 + 1\n\t\tif n > 1<<40 {\n\t\t\tn = 1\n\t\t}\n\t}\n\treturn int64(n)\n}\n", `{"n":1}`, "timed out after 1s"},
		{ts.URL, "package kernel\n\nfunc Hog(gib int) int64 {\n\tb := make([]byte, gib<<30)\n\tfor i := range b {\n\t\tb[i] = 1\n\t}\n\treturn int64(len(b))\n}\n", `{"gib":10}`, ""},
	} {
		status, out := postCustom(t, tc.url, tc.src)
		if status != 200 {
			t.Fatalf("POST /api/custom = %d %v", status, out)
		}
		for _, e := range custom.Engines {
			ev := runCustom(t, tc.url, out["id"].(string), e, tc.args)
			if !ev.Result.Failed() || !strings.Contains(ev.Result.Failure, tc.want) {
				t.Errorf("%s on %s: %+v, want a failure with %q", out["id"], e, ev.Result, tc.want)
			}
		}
	}
	// The server is unharmed: a kernel still builds and runs.
	if status, out := postCustom(t, ts.URL, sieveSource); status != 200 {
		t.Fatalf("POST /api/custom = %d %v", status, out)
	}
	ev := runCustom(t, ts.URL, custom.ID([]byte(sieveSource)), "wazero-compiler", `{"n":1000}`)
	if ev.Result.Failed() || ev.Value != "168" {
		t.Errorf("after the limits: %+v", ev.Result)
	}
}

// TestCustomExamplesBuild checks and builds every example of the page's "Your kernel" tab
// (web/src/custom-examples.ts), so that none of them shows an error when picked.
func TestCustomExamplesBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	ts, err := os.ReadFile(filepath.Join("..", "web", "src", "custom-examples.ts"))
	if err != nil {
		t.Fatal(err)
	}
	sources := regexp.MustCompile("(?s)`(package kernel.*?)`").FindAllStringSubmatch(string(ts), -1)
	if len(sources) < 6 {
		t.Fatalf("found %d example sources in custom-examples.ts, want at least 6", len(sources))
	}
	s, _ := customServer()
	for _, m := range sources {
		k, err := s.opts.Custom.Build(context.Background(), []byte(m[1]))
		if err != nil {
			t.Errorf("example %.60q: %v", m[1], err)
			continue
		}
		t.Logf("%s builds", k.Func.Name)
	}
}

// A build takes a place in the run queue under its address's share: an address that
// holds its share is answered 503 with Retry-After, and a source its check refuses needs
// no place.
func TestCustomBuildTakesQueuePlace(t *testing.T) {
	s := New(Options{MaxConcurrent: 1, MaxQueued: 1, Custom: custom.NewBuilder(custom.Options{Dir: t.TempDir()})})
	ts := peerServer(t, s)
	for range 2 { // one running, one waiting: the share of an address
		if _, err := s.queue.enter("192.0.2.1", measured); err != nil {
			t.Fatal(err)
		}
	}
	post := func(source string) (*http.Response, string) {
		body, _ := json.Marshal(map[string]string{"source": source})
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/custom", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Test-Peer", "192.0.2.1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out apiError
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp, out.Error
	}
	resp, msg := post(sieveSource)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(msg, "the run queue is full") {
		t.Errorf("a build past the address's share: %d (Retry-After %q) %q, want 503 saying the queue is full", resp.StatusCode, resp.Header.Get("Retry-After"), msg)
	}
	if resp, msg := post("package kernel\n\nimport \"os\"\n\nfunc F(n int) int64 { return int64(len(os.Args)) }\n"); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a source the check refuses: %d %q, want 422 without a place", resp.StatusCode, msg)
	}
}
