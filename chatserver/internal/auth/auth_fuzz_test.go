package auth

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/room"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef-test")

// noneToken is an unsigned token ("alg":"none") of nick.
func noneToken(nick string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
		enc([]byte(`{"sub":"`+nick+`","exp":9999999999}`)) + "."
}

// FuzzTokenNick: whatever a client passes as a connection token, verifying
// it neither panics nor accepts anything but a token signed with the
// secret, and what it accepts names a valid nick.
func FuzzTokenNick(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	good, _ := MintToken(testSecret, "bob", time.Hour, now)
	f.Add(good)
	f.Add(noneToken("bob"))
	f.Add("eyJhbGciOiJIUzI1NiJ9.e30.")
	f.Add("a.b.c")
	f.Add("")
	f.Fuzz(func(t *testing.T, raw string) {
		nick, err := tokenNick(testSecret, raw, now)
		if err != nil {
			return
		}
		if room.NickProblem(nick) != "" {
			t.Fatalf("accepted %q naming the invalid nick %q", raw, nick)
		}
		if _, err := tokenNick([]byte("another secret of at least 32 bytes!!"), raw, now); err == nil {
			t.Fatalf("%q verifies under two secrets", raw)
		}
	})
}

// FuzzClaimShown: the claim a request shows, from any header, query or
// cookie, never panics the check.
func FuzzClaimShown(f *testing.F) {
	f.Add("bob", "secret", "chat_claim_bob=x; chat_token=y")
	f.Fuzz(func(t *testing.T, nick, header, cookie string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header = http.Header{ClaimHeader: {header}, "Cookie": {cookie}}
		b := NewBook(time.Hour)
		b.Check(t.Context(), nick, claimShown(r, nick))
	})
}
