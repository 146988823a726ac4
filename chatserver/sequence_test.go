package chatserver

import (
	"net/http"
	"strings"
	"testing"
)

// TestResumeIDCannotMoveSequence is the reproduction of a client moving the
// shared id sequence with a forged resume id (18446744073709551615 wrapped it
// to 0; 1152921504606846976 put every later id above 2^53, past what a page
// can count): a resume id above the last issued one means "nothing missed",
// and later ids keep growing from where they were, across a restart too.
func TestResumeIDCannotMoveSequence(t *testing.T) {
	const maxSafe = 1 << 53 // the largest id a page's Number holds exactly
	dir := t.TempDir()
	ts := startServer(t, Options{DataDir: dir})
	john := ts.login(t, "sse", "john")
	john.expect("Welcome john!", "now online: ")
	ts.msg(t, "mary", "john", "before")
	john.expect("mary: before")
	highest := john.lastID

	for i, forged := range []struct{ kind, id string }{
		{"sse", "18446744073709551615"},
		{"ws", "1152921504606846976"},
		{"sse", "18446744073709551615"},
	} {
		nick := []string{"eve", "mallory", "trudy"}[i]
		c := ts.resume(t, forged.kind, nick, forged.id)
		welcome := c.next()
		if welcome.text != "Welcome "+nick+"!" || welcome.id <= highest || welcome.id >= maxSafe {
			t.Fatalf("%s resuming from %s: first event %d %q, want the welcome with an id just above %d", nick, forged.id, welcome.id, welcome.text, highest)
		}
		c.next() // now online
		john.expect(nick + " has joined.")
		ts.msg(t, "mary", "all", "after "+forged.id)
		john.expect("mary to all: after " + forged.id)
		if john.lastID >= maxSafe {
			t.Fatalf("an id reached %d after a resume from %s", john.lastID, forged.id)
		}
		highest = john.lastID
		if forged.kind == "sse" {
			// The notice says why nothing was replayed.
			select {
			case got := <-c.comments:
				if !strings.Contains(got, "above the last event id issued") {
					t.Errorf("notice %q", got)
				}
			default:
				t.Error("no notice about the resume id above the sequence")
			}
		}
	}
	ts.stop()

	ts2 := startServer(t, Options{DataDir: dir})
	again := ts2.login(t, "sse", "john")
	if e := again.next(); e.id <= highest || e.id >= maxSafe {
		t.Fatalf("after a restart the first id is %d, want above %d (every id already issued)", e.id, highest)
	}
}

// TestResumeIDForm: a resume id that is not a decimal uint64 is refused with
// a 400 that names the allowed form, on every way of giving one.
func TestResumeIDForm(t *testing.T) {
	ts := startServer(t, Options{})
	for _, bad := range []string{"-1", "1e3", "0x10", "18446744073709551616", "12a", "+5"} {
		for _, how := range []string{"header", "query", "ws"} {
			var req *http.Request
			switch how {
			case "header":
				req, _ = http.NewRequest("GET", ts.url+"/john", nil)
				req.Header.Set("Last-Event-ID", bad)
				req.Header.Set("Accept", "text/event-stream")
			case "query":
				req, _ = http.NewRequest("GET", ts.url+"/john?last_event_id="+bad, nil)
				req.Header.Set("Accept", "text/event-stream")
			case "ws":
				req, _ = http.NewRequest("GET", ts.url+"/ws?nick=john&resume="+strings.ReplaceAll(bad, "+", "%2B"), nil)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 512)
			n, _ := resp.Body.Read(b)
			resp.Body.Close()
			if resp.StatusCode != 400 || !strings.Contains(string(b[:n]), "decimal id") {
				t.Errorf("resume id %q by %s: %d %q, want 400 naming the decimal form", bad, how, resp.StatusCode, b[:n])
			}
		}
	}
}
