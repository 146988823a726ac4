package cluster

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/room"
)

// History is the events of the stream within the retention, by id, as
// every node keeps them in memory for the streams that resume: the
// stream itself is the store of record.
type History struct {
	events []stamped
	pruned uint64 // the last id whose events may be missing
}

type stamped struct {
	room.Event
	at time.Time // the stream's time of the record that made it
}

// Started is called with the first record a node reads: the records
// before it may have expired, so their events are missing.
func (h *History) Started(firstID uint64) { h.pruned = firstID }

// Pruned is the last id whose events may be missing from the history.
func (h *History) Pruned() uint64 { return h.pruned }

// Add keeps e, made by a record stored at at.
func (h *History) Add(e room.Event, at time.Time) { h.events = append(h.events, stamped{e, at}) }

// Delete drops the event id (an offering of mail replaced by a newer one).
func (h *History) Delete(id uint64) {
	i := sort.Search(len(h.events), func(i int) bool { return h.events[i].ID >= id })
	if i < len(h.events) && h.events[i].ID == id {
		h.events = slices.Delete(h.events, i, i+1)
	}
}

// Expire drops the events stored before cut, by the stream's clock.
func (h *History) Expire(cut time.Time) {
	i := sort.Search(len(h.events), func(i int) bool { return !h.events[i].at.Before(cut) })
	if i > 0 {
		h.pruned = max(h.pruned, h.events[i-1].ID)
		h.events = slices.Delete(h.events, 0, i)
	}
}

// Visible calls see with the events nick can see with after < id <= upTo, in order.
func (h *History) Visible(nick string, after, upTo uint64, see func(room.Event)) {
	i := sort.Search(len(h.events), func(i int) bool { return h.events[i].ID > after })
	for _, e := range h.events[i:] {
		if e.ID > upTo {
			break
		}
		if e.VisibleTo(nick) {
			see(e.Event)
		}
	}
}

// Dump writes the history as text, for tests that compare nodes.
func (h *History) Dump(w io.Writer) {
	fmt.Fprintf(w, "pruned %d\n", h.pruned)
	for _, e := range h.events {
		fmt.Fprintf(w, "event %d to %q except %q %q\n", e.ID, e.To, e.Except, e.Text)
	}
}
