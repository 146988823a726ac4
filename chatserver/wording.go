package chatserver

// The texts a stream is cut with. The texts of the source article's events
// are the rules' own: internal/room/wording.go.

const (
	cutSlow     = "slow consumer: %d events waiting, the most a connection may queue; reconnect with the last event id received to resume"
	cutShutdown = "the chat server is shutting down; reconnect with the last event id received to resume"
	cutClosed   = "closed"
)
