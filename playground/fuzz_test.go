package playground

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRunRequest posts any body to POST /api/run (decoding, the one-cell plan, the
// argument check) with runs made in-process: every answer is a result stream or a 400
// whose JSON error says what was wrong; nothing panics, nothing else comes back.
//
//	go test -run '^$' -fuzz '^FuzzRunRequest$' -fuzztime 10s ./playground
func FuzzRunRequest(f *testing.F) {
	for _, seed := range []string{
		`{"kernel":"fib_it","engine":"native","args":{"n":40},"runs":3,"warmup":0}`,
		`{"kernel":"ack","engine":"native","args":{"n":3,"m":21}}`,
		`{"kernel":"test1","engine":"native","args":{"big":1,"small":100000}}`,
		`{"kernel":"fib_rec","engine":"v8"}`,
		`{"kernel":"","engine":""}`,
		`{"kernel":"fib_it","engine":"native","args":{"n":1e400}}`,
		`{"kernel":"fib_it","engine":"native","args":{"fib_it.n":3,"":1}}`,
		`{"kernel":"fib_it","engine":"native","runs":-9223372036854775808}`,
		`{"kernel":"fib_it","engine":"native","warmup":101}`,
		`{"kernel":"fib_it","engine":"native","args":null,"runs":null}`,
		`[]`, `null`, `{`, `{"kernel":1}`, "\xff\xfe",
	} {
		f.Add(seed)
	}
	s := New(Options{Engines: []string{"native", "yaegi"}})
	s.run = instantRun
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/api/run", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
			var last event
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Type != "result" {
				t.Fatalf("200 for %q ends with %q, want a result event", body, lines[len(lines)-1])
			}
		case http.StatusBadRequest:
			var e apiError
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Fatalf("400 for %q has no error message: %q", body, rec.Body)
			}
		default:
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body)
		}
	})
}
