package headless

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Each browser's Screenshot is the whole page as a PNG: as wide as the viewport (less
// Firefox's scrollbar), as tall as the document, its top and its bottom as the page
// paints them.
func TestScreenshot(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><style>body { margin: 0; background: #fff; } div { width: 100px; height: 100px; }</style>
<div style="background: #f00"></div><div style="height: 2000px"></div><div style="background: #00f"></div>`)
	}))
	defer ts.Close()
	for _, kind := range Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			p := open(t, kind)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := p.SetViewport(ctx, 600, 500); err != nil {
				t.Fatal(err)
			}
			if err := p.Navigate(ctx, ts.URL); err != nil {
				t.Fatal(err)
			}
			shot, err := Screenshot(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(shot))
			if err != nil {
				t.Fatalf("the screenshot is no PNG: %v", err)
			}
			b := img.Bounds()
			if b.Dx() < 580 || b.Dx() > 600 || b.Dy() < 2200 {
				t.Fatalf("screenshot %d × %d px, want about 600 wide and the whole document, 2200 px tall", b.Dx(), b.Dy())
			}
			rgb := func(x, y int) [3]uint32 {
				r, g, bl, _ := img.At(x, y).RGBA()
				return [3]uint32{r >> 8, g >> 8, bl >> 8}
			}
			if got := rgb(50, 50); got != [3]uint32{255, 0, 0} {
				t.Errorf("the top left is %v, want the red square", got)
			}
			if got := rgb(50, 2150); got != [3]uint32{0, 0, 255} {
				t.Errorf("2150 px down is %v, want the blue square below the fold", got)
			}
			if got := rgb(300, 50); got != [3]uint32{255, 255, 255} {
				t.Errorf("beside the red square is %v, want the white page", got)
			}
		})
	}
}
