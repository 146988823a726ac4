package auth

import (
	"net/http/httptest"
	"testing"
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
