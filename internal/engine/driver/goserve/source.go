package goserve

import (
	_ "embed"
	"strings"
)

//go:embed serve.go
var source string

// Source returns this package's serve.go as a file of package pkg ("main"), for a driver
// built outside this module.
func Source(pkg string) string {
	return strings.Replace(source, "\npackage goserve\n", "\npackage "+pkg+"\n", 1)
}
