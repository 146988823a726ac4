package loadpage_test

import (
	"net/http"

	"github.com/wasmgap/wasmgap/internal/loadpage"
)

// The load page is mounted under /load/ by a server that knows its own address; it runs
// load against that address only.
func ExampleHandler() {
	mux := http.NewServeMux()
	mux.Handle("/load/", http.StripPrefix("/load", loadpage.Handler(loadpage.Options{
		BaseURL:  "http://127.0.0.1:8080",
		ChatPath: "/chat/",
	})))
	_ = http.ListenAndServe // e.g. http.ListenAndServe("127.0.0.1:8080", mux)
}
