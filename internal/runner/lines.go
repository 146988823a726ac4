package runner

import (
	"bytes"
	"cmp"
	"fmt"
)

// maxLine bounds a line a worker may write on its stdout.
const maxLine = 1 << 20

// errLongLine is the protocol error of a worker line over maxLine: the line is refused
// whole, never cut and read in parts.
var errLongLine = fmt.Errorf("the worker wrote an output line over %d MiB (refused whole: a result that large, such as a failure's text, is not read)", maxLine>>20)

// lineWriter calls onLine for every complete line written to it, and onLong once for
// each line longer than max (maxLine when zero), whose bytes it drops up to the line's end: no part of a
// long line reaches onLine. onLine must not keep the slice it is given.
type lineWriter struct {
	buf    []byte
	long   bool // the current line is past the limit
	max    int
	onLine func([]byte)
	onLong func()
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.add(p)
			break
		}
		w.add(p[:i])
		if !w.long {
			w.onLine(w.buf)
		}
		w.buf, w.long = w.buf[:0], false
		p = p[i+1:]
	}
	return n, nil
}

// add appends part of the current line, unless that makes it long.
func (w *lineWriter) add(p []byte) {
	if w.long {
		return
	}
	if len(w.buf)+len(p) > cmp.Or(w.max, maxLine) {
		w.buf, w.long = w.buf[:0], true
		if w.onLong != nil {
			w.onLong()
		}
		return
	}
	w.buf = append(w.buf, p...)
}

// flush hands on the last line when it did not end with a newline.
func (w *lineWriter) flush() {
	if !w.long && len(bytes.TrimSpace(w.buf)) > 0 {
		w.onLine(w.buf)
	}
	w.buf, w.long = nil, false
}
