package headless

import (
	"context"
	"fmt"

	"github.com/chromedp/chromedp"

	"github.com/wasmgap/wasmgap/internal/bidi"
)

// Screenshot captures the whole page of p (a Page that Start or OpenWindow returned), as far
// down as it reaches, as a PNG: Chromium's through the DevTools protocol, Firefox's through
// WebDriver BiDi's browsingContext.captureScreenshot.
func Screenshot(ctx context.Context, p Page) ([]byte, error) {
	switch v := p.(type) {
	case *chromium:
		joined, cancel := v.join(ctx)
		defer cancel()
		// Quality 100: chromedp writes a JPEG below it.
		png, err := chromedp.Run(joined, chromedp.FullScreenshot(100))
		if err != nil {
			return nil, fmt.Errorf("screenshot of chromium's page: %w", err)
		}
		return png, nil
	case *firefox:
		return v.window.screenshot(ctx)
	case *window:
		return v.screenshot(ctx)
	}
	return nil, fmt.Errorf("headless: Screenshot takes a page that Start or OpenWindow returned, not a %T", p)
}

func (w *window) screenshot(ctx context.Context) ([]byte, error) {
	png, err := w.f.conn.CaptureScreenshot(ctx, w.context, bidi.Document)
	if err != nil {
		return nil, fmt.Errorf("screenshot of firefox's page: %w", err)
	}
	return png, nil
}
