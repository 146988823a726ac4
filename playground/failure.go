package playground

import (
	"regexp"
	"strings"
)

// failureKinds word a cell's failure in one short line, the same words whatever tier
// failed and however its runtime put it; the first that matches wins. The page words
// its own cells' failures alike (web/src/failure.ts: the same table).
var failureKinds = []struct {
	re   *regexp.Regexp
	kind string
}{
	{regexp.MustCompile(`(?i)stack overflow|maximum call stack|too much recursion|call stack exhausted|goroutine stack exceeds`), "stack overflow"},
	{regexp.MustCompile(`(?i)out of memory|cannot allocate|allocation failed|memory exhausted|OutOfMemory`), "out of memory"},
	{regexp.MustCompile(`(?i)wrong result|wrong value|not the catalogue's|mismatch`), "wrong value"},
	{regexp.MustCompile(`(?i)wasm error|trap|unreachable|RuntimeError|panic|crashed|signal`), "trapped"},
	{regexp.MustCompile(`(?i)load failed`), "failed to load"},
}

var timedOut = regexp.MustCompile(`timed out after (\d+(?:\.\d+)?)\s*(ms|s|m)\b`)

// failureKind words a failure in one line: "timed out after 30 s", "stack overflow", "out
// of memory", "trapped", "wrong value", else the failure's first line, cut to 80 characters.
func failureKind(failure string) string {
	if m := timedOut.FindStringSubmatch(failure); m != nil {
		return "timed out after " + m[1] + " " + m[2]
	}
	// A runtime that is missing says what to install: kept, in its own words.
	missing := strings.Contains(failure, "not installed")
	for _, k := range failureKinds {
		if !missing && k.re.MatchString(failure) {
			return k.kind
		}
	}
	line, _, _ := strings.Cut(strings.TrimSpace(failure), "\n")
	line = strings.TrimPrefix(line, "load failed: ")
	if r := []rune(line); len(r) > 80 {
		line = string(r[:79]) + "…"
	}
	return line
}
