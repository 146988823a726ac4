package chatserver

import (
	"fmt"

	"github.com/wasmgap/wasmgap/chatserver/internal/room"
)

// ValidNick reports why nick cannot be a nickname, or nil when it can.
func ValidNick(nick string) error {
	if why := room.NickProblem(nick); why != "" {
		return refuse(ErrInvalid, "%s", why)
	}
	return nil
}

// validText reports why text cannot be sent, or nil.
func validText(text string, maxBytes int) error {
	if text == "" {
		return refuse(ErrInvalid, "message text is empty: send 1 to %d bytes", maxBytes)
	}
	if len(text) > maxBytes {
		return refuse(ErrTooLarge, "message text is %d bytes: at most %d are allowed", len(text), maxBytes)
	}
	if why := room.TextProblem(text); why != "" {
		return refuse(ErrInvalid, "%s", why)
	}
	return nil
}

// validPost checks a post's fields and says what is wrong and allowed.
func validPost(p message, maxBytes int) error {
	if err := ValidNick(p.From); err != nil {
		return fmt.Errorf("from: %w", err)
	}
	if p.To != "all" {
		if err := ValidNick(p.To); err != nil {
			return fmt.Errorf("to: %w (or \"all\" for everyone)", err)
		}
	}
	return validText(p.Text, maxBytes)
}
