// Package web holds the playground page: its TypeScript sources (src/), bundled by
// `go run ./build` into dist/, which this package embeds so that one binary serves the page.
// A fresh clone embeds only dist/placeholder; the server then says which command builds it.
package web

import (
	"embed"
	"io/fs"
	"time"
)

// Manifest is dist/manifest.json, written by the build (go run ./build) and read by the
// server: which content-hashed file holds each logical part of the page.
type Manifest struct {
	// Files maps logical names ("main.js", "main.css", "worker-wasm.js", "worker-js.js",
	// "kernels.wasm") to the hashed file names in dist.
	Files map[string]string `json:"files"`
	// Built is when the bundle was built.
	Built time.Time `json:"built"`
}

//go:embed all:dist
var dist embed.FS

// Dist returns the built page: manifest.json, index.html and the content-hashed files.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is a valid path: cannot happen
	}
	return sub
}
