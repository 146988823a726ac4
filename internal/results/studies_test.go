package results

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestListAndDeleteStudies(t *testing.T) {
	stores(t, func(t *testing.T, dsn string) {
		s, ctx := open(t, dsn), context.Background()
		if hint := s.StudyHint(ctx); hint != "the store holds no warm-up study" {
			t.Errorf("an empty store's hint: %q", hint)
		}
		cli, err := s.SaveStudy(ctx, NewStudy(SourceCLI, testStudy()))
		if err != nil {
			t.Fatal(err)
		}
		other := testStudy()
		other.Kernel, other.Args, other.Label = "ack", []int{2, 3}, "ack(2, 3)"
		other.Engines = other.Engines[:1]
		server, err := s.SaveStudy(ctx, NewStudy(SourceServer, other))
		if err != nil {
			t.Fatal(err)
		}
		ids := func(f Filter) string {
			list, err := s.ListStudies(ctx, f)
			if err != nil {
				t.Fatalf("ListStudies(%+v): %v", f, err)
			}
			var out []string
			for _, st := range list {
				out = append(out, fmt.Sprint(st.ID))
			}
			return strings.Join(out, ",")
		}
		for _, c := range []struct {
			name string
			f    Filter
			want string
		}{
			{"all, newest first", Filter{}, fmt.Sprintf("%d,%d", server, cli)},
			{"source", Filter{Source: SourceCLI}, fmt.Sprint(cli)},
			{"kernel and args", Filter{Kernel: "ack", Args: "2,3"}, fmt.Sprint(server)},
			{"an engine among several", Filter{Engine: "java"}, fmt.Sprint(cli)},
			{"no part of a name", Filter{Engine: "jav"}, ""},
			{"no wildcard: _ is itself", Filter{Engine: "j_va"}, ""},
			{"no wildcard: % is itself", Filter{Engine: "%"}, ""},
			{"limit", Filter{Limit: 1}, fmt.Sprint(server)},
			{"until", Filter{Until: time.Now().Add(-time.Hour)}, ""},
			{"ids", Filter{IDs: []int64{cli}}, fmt.Sprint(cli)},
			{"a field studies do not record", Filter{OS: "linux"}, ""},
		} {
			if got := ids(c.f); got != c.want {
				t.Errorf("%s: studies %q, want %q", c.name, got, c.want)
			}
		}
		list, _ := s.ListStudies(ctx, Filter{IDs: []int64{cli}})
		st := list[0]
		if st.Kind != "study" || st.Label != "fib_rec(20)" || st.Kernel != "fib_rec" || st.Args != "20" || !slices.Equal(st.Engines, []string{"native", "java"}) ||
			st.Executions != 1 || st.Status != "1 of 3 executions failed" || st.Source != SourceCLI {
			t.Errorf("study %d listed as %+v", cli, st)
		}
		// An unknown id deletes nothing and says which studies there are.
		_, err = s.DeleteStudies(ctx, []int64{cli, server + 100})
		if !errors.Is(err, ErrStudyNotFound) || !strings.Contains(err.Error(), fmt.Sprintf("holds studies %d, %d", server, cli)) {
			t.Errorf("delete of an unknown id: %v, want ErrStudyNotFound naming the studies held", err)
		}
		if got := ids(Filter{}); got != fmt.Sprintf("%d,%d", server, cli) {
			t.Errorf("after a refused delete: %q, want both studies", got)
		}
		if _, err := s.DeleteStudies(ctx, nil); err == nil {
			t.Error("a delete of no id was accepted")
		}
		if n, err := s.DeleteStudies(ctx, []int64{cli}); n != 1 || err != nil {
			t.Fatalf("DeleteStudies: %d, %v; want 1", n, err)
		}
		if _, err := s.Study(ctx, cli); !errors.Is(err, ErrStudyNotFound) {
			t.Errorf("a deleted study: %v", err)
		}
		if got := ids(Filter{}); got != fmt.Sprint(server) {
			t.Errorf("after the delete: %q", got)
		}
	})
}
