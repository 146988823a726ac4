package engine_test

import (
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine"
)

// TestOrderListsEachEngineOnce: a name twice in Order would have two places.
func TestOrderListsEachEngineOnce(t *testing.T) {
	seen := map[string]string{}
	groups := map[string]bool{}
	for _, g := range engine.Order {
		if groups[g.Group] {
			t.Errorf("group %q is in Order twice", g.Group)
		}
		groups[g.Group] = true
		for _, name := range g.Engines {
			if prev, ok := seen[name]; ok {
				t.Errorf("%s is in Order twice (%s and %s)", name, prev, g.Group)
			}
			seen[name] = g.Group
		}
	}
	for _, g := range []string{engine.GroupGo, engine.GroupWasm, engine.GroupBrowsers, engine.GroupOther} {
		if !groups[g] {
			t.Errorf("Order has no group %q", g)
		}
	}
}

// TestRanksFollowOrder: the registered engines and the page's take their group and rank
// from their place in Order, so that sorting by rank gives Order.
func TestRanksFollowOrder(t *testing.T) {
	prev := 0
	for _, g := range engine.Order {
		for _, name := range g.Engines {
			info, ok := engine.Lookup(name)
			if !ok {
				continue // an engine this test binary does not link
			}
			if info.Group != g.Group || info.Rank <= prev {
				t.Errorf("%s: group %q rank %d, want group %q and a rank above %d", name, info.Group, info.Rank, g.Group, prev)
			}
			prev = info.Rank
		}
	}
	for _, p := range engine.Page {
		if p.Rank == 0 || p.Group == "" {
			t.Errorf("page engine %s has no place: %+v", p.Name, p)
		}
	}
	if got := engine.PageNames(); strings.Join(got, ",") != engine.BrowserWasm+","+engine.BrowserJS {
		t.Errorf("PageNames() = %q", got)
	}
}

// TestDescribeNeedsAPlace: a registration whose name Order does not list, or that sets its
// own rank or group, is a programming error.
func TestDescribeNeedsAPlace(t *testing.T) {
	for _, tc := range []struct {
		name string
		info engine.Info
		want string
	}{
		{"unplaced", engine.Info{Name: "no-such-engine"}, "has no place in engine.Order"},
		{"own rank", engine.Info{Name: engine.Lua, Rank: 7}, "sets its Group or Rank"},
		{"own group", engine.Info{Name: engine.Lua, Group: engine.GroupGo}, "sets its Group or Rank"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), tc.want) {
					t.Errorf("Describe(%+v) panicked with %v, want %q", tc.info, r, tc.want)
				}
			}()
			engine.Describe(tc.info, func() engine.Engine { return nil })
		})
	}
}
