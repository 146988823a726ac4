package room

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The texts of the source article's events, in one place.

// WelcomeText greets a new stream.
func WelcomeText(nick string) string { return "Welcome " + nick + "!" }

// OnlineText lists who is online: every name, or the first of total.
func OnlineText(nicks []string, total int) string {
	if total <= len(nicks) {
		return "now online: " + strings.Join(nicks, ", ")
	}
	return "now online: " + strings.Join(nicks, ", ") + " and " + strconv.Itoa(total-len(nicks)) + " others (" + strconv.Itoa(total) + " users; a welcome names at most " + strconv.Itoa(len(nicks)) + ")"
}

// JoinedText and LeftText tell one user's presence.
func JoinedText(nick string) string { return nick + " has joined." }
func LeftText(nick string) string   { return nick + " has left." }

// ManyText is the notice for several users who joined (or left) within one
// presence window: "A and B joined.", "A, B and C joined.", "A, B and 312
// others joined.".
func ManyText(nicks []string, joined bool) string {
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

// ToAllText is a message to everyone.
func ToAllText(from, text string) string { return from + " to all: " + text }

// PrivateText is a private message as its receiver sees it.
func PrivateText(from, text string) string { return from + ": " + text }

// EchoText is what the sender of a private message sees.
func EchoText(to, text string) string { return "You to " + to + ": " + text }

// OfflineEchoText is what the sender of a message kept for an offline user sees.
func OfflineEchoText(to, text string) string { return "You to " + to + " (offline): " + text }

// OfflineText is a mail kept while its receiver was offline, as delivered at a login.
func OfflineText(from string, sent time.Time, text string) string {
	return from + " (" + sent.Format("2006-01-02 15:04") + "): " + text
}

// TextProblem says why text cannot be a message's text, or "" when it can:
// a message is one line of valid UTF-8 with no control character (C0 or C1) but tab,
// no line or paragraph separator (U+0085, U+2028, U+2029) and no
// bidirectional control (U+202A to U+202E, U+2066 to U+2069), which would
// make the line that shows it read otherwise than it was written.
func TextProblem(text string) string {
	if !utf8.ValidString(text) {
		return "message text is not valid UTF-8"
	}
	for _, r := range text {
		switch {
		case r < 0x20 && r != '\t' || r == 0x7f:
			return fmt.Sprintf("message text has the control character %U: a message is one line of text (tabs allowed)", r)
		case r == 0x85 || r == 0x2028 || r == 0x2029:
			return fmt.Sprintf("message text has the line break %U: a message is one line of text", r)
		case r >= 0x80 && r <= 0x9f:
			return fmt.Sprintf("message text has the control character %U: a message is one line of text (tabs allowed)", r)
		case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
			return fmt.Sprintf("message text has the bidirectional control %U, which reorders the text that follows it on screen: a message is one line of text without bidirectional controls", r)
		}
	}
	return ""
}

// MaxNickLen is the longest nickname accepted.
const MaxNickLen = 32

// reserved are words that cannot be nicknames, in any case ("ALL" and "Msg"
// included): "all" addresses everyone, the others are routes ("." and ".."
// would resolve as paths).
var reserved = map[string]bool{"all": true, "msg": true, "ws": true, "send": true, ".": true, "..": true}

const nickRule = `use 1–32 letters, digits, '_', '.' or '-'; "all", "msg", "ws", "send", "." and ".." are reserved, in any case`

// NickProblem says why nick cannot be a nickname, and what is allowed; ""
// when it can.
func NickProblem(nick string) string {
	if nick == "" {
		return "nickname is empty: " + nickRule
	}
	// The character named as it is: 'é', not the 'Ã' of its first byte.
	for i, r := range nick {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(nick[i:]); size == 1 {
				return fmt.Sprintf("nickname %q has the byte %q, which is not UTF-8: %s", nick, nick[i:i+1], nickRule)
			}
		}
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return fmt.Sprintf("nickname %q has the character %q: %s", nick, r, nickRule)
		}
	}
	if len(nick) > MaxNickLen {
		return fmt.Sprintf("nickname is %d characters long: %s", len(nick), nickRule)
	}
	if reserved[strings.ToLower(nick)] {
		return fmt.Sprintf("nickname %q is reserved: %s", nick, nickRule)
	}
	return ""
}
