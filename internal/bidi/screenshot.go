package bidi

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
)

// Origin is what CaptureScreenshot captures.
type Origin string

// The origins of browsingContext.captureScreenshot.
const (
	// Viewport is what the viewport shows now.
	Viewport Origin = "viewport"
	// Document is the whole document, as far down and across as it reaches.
	Document Origin = "document"
)

// pngSignature opens every PNG file.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// CaptureScreenshot captures the browsing context as a PNG (browsingContext.captureScreenshot):
// the viewport, or the whole document. An answer that is not a base64 PNG is an error.
func (c *Conn) CaptureScreenshot(ctx context.Context, context string, origin Origin) ([]byte, error) {
	if origin != Viewport && origin != Document {
		return nil, fmt.Errorf("bidi browsingContext.captureScreenshot: origin %q: allowed are %q and %q", origin, Viewport, Document)
	}
	var res struct {
		Data string `json:"data"`
	}
	err := c.Call(ctx, "browsingContext.captureScreenshot", map[string]any{
		"context": context,
		"origin":  string(origin),
		"format":  map[string]any{"type": "image/png"},
	}, &res)
	if err != nil {
		return nil, err
	}
	png, err := base64.StdEncoding.DecodeString(res.Data)
	if err != nil {
		return nil, fmt.Errorf("bidi browsingContext.captureScreenshot: the data is not base64: %w", err)
	}
	if !bytes.HasPrefix(png, pngSignature) {
		return nil, fmt.Errorf("bidi browsingContext.captureScreenshot: the data (%d bytes) is not a PNG", len(png))
	}
	return png, nil
}
