package chatserver

import (
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/store"
)

// The texts of the source article's events, in one place.

func welcomeText(nick string) string { return "Welcome " + nick + "!" }

// onlineText lists who is online: every name, or the first of total.
func onlineText(nicks []string, total int) string {
	if total <= len(nicks) {
		return "now online: " + strings.Join(nicks, ", ")
	}
	return "now online: " + strings.Join(nicks, ", ") + " and " + strconv.Itoa(total-len(nicks)) + " others (" + strconv.Itoa(total) + " users; a welcome names at most " + strconv.Itoa(len(nicks)) + ")"
}
func joinedText(nick string) string { return nick + " has joined." }
func leftText(nick string) string   { return nick + " has left." }

// manyText is the notice for several users who joined (or left) within one
// presence window: "A and B joined.", "A, B and C joined.", "A, B and 312
// others joined.".
func manyText(nicks []string, joined bool) string {
	verb := " left."
	if joined {
		verb = " joined."
	}
	switch n := len(nicks); {
	case n == 2:
		return nicks[0] + " and " + nicks[1] + verb
	case n == 3:
		return nicks[0] + ", " + nicks[1] + " and " + nicks[2] + verb
	default:
		return nicks[0] + ", " + nicks[1] + " and " + strconv.Itoa(n-2) + " others" + verb
	}
}
func toAllText(from, text string) string   { return from + " to all: " + text }
func privateText(from, text string) string { return from + ": " + text }

// echoText is what the sender of a private message sees.
func echoText(to, text string) string { return "You to " + to + ": " + text }

// offlineEchoText is what the sender of a message kept for an offline user sees.
func offlineEchoText(to, text string) string { return "You to " + to + " (offline): " + text }

// offlineText is a message kept while its receiver was offline, as delivered at a login.
func offlineText(m *store.Mail) string {
	return m.From + " (" + time.Unix(0, m.Time).Format("2006-01-02 15:04") + "): " + m.Text
}

const (
	cutSlow     = "slow consumer: %d events waiting, the most a connection may queue; reconnect with the last event id received to resume"
	cutShutdown = "the chat server is shutting down; reconnect with the last event id received to resume"
	cutClosed   = "closed"
)
