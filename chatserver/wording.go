package chatserver

import (
	"strings"
	"time"
)

// The texts of the source article's events, in one place.

func welcomeText(nick string) string       { return "Welcome " + nick + "!" }
func onlineText(nicks []string) string     { return "now online: " + strings.Join(nicks, ", ") }
func joinedText(nick string) string        { return nick + " has joined." }
func leftText(nick string) string          { return nick + " has left." }
func toAllText(from, text string) string   { return from + " to all: " + text }
func privateText(from, text string) string { return from + ": " + text }

// echoText is what the sender of a private message sees.
func echoText(to, text string) string { return "You to " + to + ": " + text }

// offlineEchoText is what the sender of a message kept for an offline user sees.
func offlineEchoText(to, text string) string { return "You to " + to + " (offline): " + text }

// offlineText is a message kept while its receiver was offline, as delivered at a login.
func (m *mail) offlineText() string {
	return m.From + " (" + time.Unix(0, m.Time).Format("2006-01-02 15:04") + "): " + m.Text
}

const (
	cutSlow     = "slow consumer: %d events waiting, the most a connection may queue; reconnect with the last event id received to resume"
	cutShutdown = "the chat server is shutting down; reconnect with the last event id received to resume"
	cutClosed   = "closed"
)
