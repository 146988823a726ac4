package auth

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"
)

// TestTokenOfScheme: the Authorization scheme is case-insensitive (RFC
// 7235 § 2.1), and any amount of space may follow it.
func TestTokenOfScheme(t *testing.T) {
	for _, tc := range []struct{ header, want string }{
		{"Bearer abc", "abc"},
		{"bearer abc", "abc"},
		{"BEARER abc", "abc"},
		{"Bearer   abc ", "abc"},
		{"Basic abc", ""},
		{"Bearerabc", ""},
		{"Bearer", ""},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", tc.header)
		if got := tokenOf(r); got != tc.want {
			t.Errorf("Authorization: %q: token %q, want %q", tc.header, got, tc.want)
		}
	}
}

// TestBookKeep: Keep holds a live claim for the hold from now, and does
// not bring back one that ended.
func TestBookKeep(t *testing.T) {
	b := NewBook(time.Hour)
	_, release, err := b.Login(context.Background(), "bob", "")
	if err != nil {
		t.Fatal(err)
	}
	release()
	before := b.m["bob"].until
	b.Keep(context.Background(), "bob")
	if got := b.m["bob"].until; !got.After(before) {
		t.Errorf("Keep on a live claim: until %v, was %v", got, before)
	}
	b.m["bob"].until = time.Now().Add(-time.Second) // ended
	b.Keep(context.Background(), "bob")
	if b.m["bob"].live(time.Now()) {
		t.Error("Keep brought back a claim that had ended")
	}
	b.Keep(context.Background(), "nobody") // no claim: nothing
	if _, ok := b.m["nobody"]; ok {
		t.Error("Keep made a claim")
	}
}
