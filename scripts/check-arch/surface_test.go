package main

import (
	"strings"
	"testing"
)

const surfaceMain = `package main

var commands = map[string]command{
	"serve": {"serve", runServe},
	"bench": {"bench", runBench},
}
`

const surfaceRoutes = `package playground

func routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/kernels", h)
	mux.Handle("POST /api/run", h)
	mux.HandleFunc("/api/", notFound)
	mux.Handle("/chat/", chat)
}
`

const surfaceDoc = "# A\n\n| package | what |\n| --- | --- |\n" +
	"| `cmd/wasmgap` | the binary: `serve`, `bench`, and the worker (`WASMGAP_WORKER=1`) |\n" +
	"| `playground` | the API (`/api/kernels`, `POST /api/run`) |\n"

// TestCheckSurface: the subcommands and the routes agree with their rows; a command or a
// route missing from a row, or named there and gone from the code, is a problem.
func TestCheckSurface(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want []string
	}{
		{"agrees", surfaceDoc, nil},
		{"a command unnamed", strings.Replace(surfaceDoc, "`bench`, ", "", 1), []string{"the subcommand `bench` (cmd/wasmgap/main.go) is not named"}},
		{"a command gone", strings.Replace(surfaceDoc, "`bench`", "`bench`, `results`", 1), []string{"`results` is no subcommand"}},
		{"a route unnamed", strings.Replace(surfaceDoc, "`/api/kernels`, ", "", 1), []string{"the API route `/api/kernels` (playground) is not named"}},
		{"a route gone", strings.Replace(surfaceDoc, "`/api/kernels`", "`/api/kernels`, `/api/history`", 1), []string{"`/api/history` is no API route"}},
		{"no row", strings.Replace(surfaceDoc, "`playground`", "`web`", 1), []string{"no row names the API routes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, map[string]string{
				"docs/ARCHITECTURE.md": tc.doc,
				"cmd/wasmgap/main.go":  surfaceMain,
				"playground/routes.go": surfaceRoutes,
				"playground/x_test.go": "package playground\n\nfunc f() { mux.HandleFunc(\"/api/test-only\", h) }\n",
			})
			problems, err := checkSurface(root, "docs/ARCHITECTURE.md")
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != len(tc.want) {
				t.Fatalf("problems %q, want %d like %q", problems, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(problems[i], w) {
					t.Errorf("problem %q, want %q", problems[i], w)
				}
			}
		})
	}
}

const exposedDoc = "# S\n\n| server | routes | what |\n| --- | --- | --- |\n" +
	"| `wasmgap serve` | `GET /` and the page; `GET /api/kernels` | read |\n" +
	"| | `POST /api/run` | run |\n" +
	"| `wasmgap chat` | `GET /` | chat |\n"

// TestCheckExposed: the table of exposed routes names every API route in the rows of
// `wasmgap serve` and those after it with an empty first cell, and no route that is gone.
func TestCheckExposed(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want []string
	}{
		{"agrees", exposedDoc, nil},
		{"a route unnamed", strings.Replace(exposedDoc, "`POST /api/run`", "`POST /load/run`", 1), []string{"the API route `/api/run` (playground) is not named"}},
		{"a route gone", strings.Replace(exposedDoc, "`POST /api/run`", "`POST /api/run`, `GET /api/explain`", 1), []string{"`/api/explain` is no API route"}},
		{"in another server's rows", strings.Replace(exposedDoc, "| | `POST /api/run` | run |\n", "", 1) + "| | `POST /api/run` | chat's |\n", []string{"the API route `/api/run` (playground) is not named"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, map[string]string{"docs/SECURITY.md": tc.doc, "playground/routes.go": surfaceRoutes})
			problems, err := checkExposed(root, "docs/SECURITY.md")
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != len(tc.want) {
				t.Fatalf("problems %q, want %d like %q", problems, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(problems[i], w) {
					t.Errorf("problem %q, want %q", problems[i], w)
				}
			}
		})
	}
}
