package auth

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/store"
)

// TestRestoreBook: the claims a store kept come back at a start: one
// whose stream was open at a crash holds its nickname for the hold from
// the start, one within its hold until it ends, one past it is not put
// back and is listed for the store to delete; a new claim is saved (and
// waited for) before its secret is given, and every later change saved.
func TestRestoreBook(t *testing.T) {
	now := time.Now()
	hash := hashSecret("s")
	kept := map[string]store.Claim{
		"open":  {Hash: hash[:], Open: true},
		"held":  {Hash: hash[:], Until: now.Add(time.Minute).UnixNano()},
		"ended": {Hash: hash[:], Until: now.Add(-time.Minute).UnixNano()},
	}
	var saves []string
	save := func(_ context.Context, nick string, wait bool) error {
		saves = append(saves, nick+map[bool]string{true: " (waited)", false: ""}[wait])
		return nil
	}
	b, ended := RestoreBook(time.Hour, kept, now, save)
	if !slices.Equal(ended, []string{"ended"}) {
		t.Errorf("ended %v, want [ended]", ended)
	}
	for nick, claimed := range map[string]bool{"open": true, "held": true, "ended": false} {
		if got := b.MayBeClaimed(nick); got != claimed {
			t.Errorf("%s claimed: %v, want %v", nick, got, claimed)
		}
	}
	if until := b.m["open"].until; until.Before(now.Add(time.Hour)) {
		t.Errorf("a claim open at the crash holds until %v, want the hold from the start", until)
	}
	if _, _, err := b.Login(context.Background(), "open", "wrong"); Status(err) != 403 {
		t.Errorf("a stranger's login as a restored claim: %v, want 403", err)
	}
	secret, release, err := b.Login(context.Background(), "new", "")
	if err != nil || secret == "" {
		t.Fatalf("a new claim: %q %v", secret, err)
	}
	release()
	if want := []string{"new (waited)", "new"}; !slices.Equal(saves, want) {
		t.Errorf("saves %q, want %q", saves, want)
	}
}

// TestClaimNotSavedIsTakenBack: a new claim the store could not take is
// refused (not a 403: the server's failure) and leaves no claim behind,
// whose secret nobody got.
func TestClaimNotSavedIsTakenBack(t *testing.T) {
	failing := func(_ context.Context, _ string, wait bool) error {
		if wait {
			return context.DeadlineExceeded
		}
		return nil
	}
	b, _ := RestoreBook(time.Hour, nil, time.Now(), failing)
	if _, _, err := b.Login(context.Background(), "bob", ""); err == nil || Status(err) != 0 {
		t.Fatalf("a claim that could not be saved: %v, want the store's error", err)
	}
	if b.MayBeClaimed("bob") {
		t.Error("the claim that could not be saved still holds bob")
	}
}
