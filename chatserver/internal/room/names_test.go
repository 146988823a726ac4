package room

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestWelcomeNamesFollowUsers checks that the sorted index of the users online, which a
// welcome's "now online" line is read from, stays the set of users through opens, closes,
// leave graces, a node's end and rolled-back transactions, and that a welcome names the
// first MaxOnlineShown of them by name, without the newcomer back within its grace.
func TestWelcomeNamesFollowUsers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := newDriver(Config{Grace: time.Minute})
	open := map[string][]uint64{} // nick: its open tokens
	token := uint64(0)
	check := func(step int) {
		t.Helper()
		if want := slices.Sorted(maps.Keys(d.m.users)); !slices.Equal(d.m.names, want) {
			t.Fatalf("step %d: index %d names, users %d: index %q", step, len(d.m.names), len(want), d.m.names)
		}
	}
	for step := range 3000 {
		nick := fmt.Sprintf("u%03d", rng.IntN(120))
		switch op := rng.IntN(10); {
		case op < 5:
			token++
			u := d.m.users[nick]
			var want []string
			for _, n := range slices.Sorted(maps.Keys(d.m.users)) {
				if n == nick && len(u.streams) == 0 {
					continue
				}
				want = append(want, n)
			}
			total := len(want)
			want = want[:min(len(want), MaxOnlineShown)]
			out := d.do(Request{Kind: Open, Nick: nick, Node: "a", Token: token})
			if got := out.Joined.Preamble[1].Text; got != OnlineText(want, total) {
				t.Fatalf("step %d: %s's welcome %q, want %q", step, nick, got, OnlineText(want, total))
			}
			open[nick] = append(open[nick], token)
		case op < 8 && len(open[nick]) > 0:
			tk := open[nick][0]
			open[nick] = open[nick][1:]
			out := d.do(Request{Kind: Close, Nick: nick, Node: "a", Token: tk})
			for _, g := range out.Graces {
				if rng.IntN(2) == 0 {
					d.do(Request{Kind: GraceOver, Nick: g.Nick, Gen: g.Gen})
				}
			}
		case op == 8:
			d.m.Begin()
			for range 5 {
				token++
				d.do(Request{Kind: Open, Nick: fmt.Sprintf("t%03d", rng.IntN(200)), Node: "b", Token: token})
			}
			if len(open[nick]) > 0 {
				d.do(Request{Kind: Close, Nick: nick, Node: "a", Token: open[nick][0]})
			}
			d.m.Rollback()
		default:
			d.m.Begin()
			token++
			d.do(Request{Kind: Open, Nick: "v" + nick, Node: "b", Token: token})
			d.m.Commit()
			if rng.IntN(20) == 0 {
				d.do(Request{Kind: NodeGone, Node: "b"})
			}
		}
		check(step)
	}
	if !strings.HasPrefix(d.m.names[0], "u") || len(d.m.names) <= MaxOnlineShown {
		t.Fatalf("the run never had more users than a welcome names: %d", len(d.m.names))
	}
}
