package headless

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium is a Chromium started by chromedp's allocator, which forks it from a thread that
// lives as long as the browser (the parent-death signal is a thread's) and kills what is
// left of it (its zygote, its network service) when it ends.
type chromium struct {
	ctx     context.Context // the tab's
	cancel  func()
	version string
	pid     int
	console consoleErrors
	profile string
}

// ChromiumFlags are the flags of every headless Chromium the project starts: no sandbox
// (containers, root in CI), no GPU, no network of its own (the machines that run it reach
// only loopback).
func ChromiumFlags(path, profile string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			if cmd.SysProcAttr == nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{}
			}
			cmd.SysProcAttr.Setpgid = true
		}),
	}
}

func startChromium(ctx context.Context, path, profile string, extra []chromedp.ExecAllocatorOption) (Page, error) {
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(ChromiumFlags(path, profile), extra...)...)
	tabCtx, cancelTab := chromedp.NewContext(allocCtx)
	c := &chromium{ctx: tabCtx, profile: profile, cancel: func() { cancelTab(); cancelAlloc() }}
	done := make(chan error, 1)
	go func() {
		err := chromedp.Do(tabCtx)
		if err == nil {
			var v browser.GetVersionResult
			v, err = chromedp.CallBrowser(tabCtx, browser.GetVersion, cdp.Empty{})
			c.version = chromiumVersion(v.Product, v.JsVersion)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("start chromium: %w", err)
		}
	case <-ctx.Done():
		c.Close()
		return nil, fmt.Errorf("start chromium: %w", ctx.Err())
	}
	if b := chromedp.FromContext(tabCtx).Browser; b != nil && b.Process() != nil {
		c.pid = b.Process().Pid
	}
	go func() {
		for ev, err := range chromedp.Events(tabCtx, runtime.ConsoleAPICalled) {
			if err != nil {
				return
			}
			if ev.Type != runtime.ConsoleAPICalledTypeError {
				continue
			}
			var parts []string
			for _, a := range ev.Args {
				if a.Value != nil {
					parts = append(parts, strings.Trim(string(a.Value), `"`))
				} else {
					parts = append(parts, a.Description)
				}
			}
			c.console.add(strings.Join(parts, " "))
		}
	}()
	go func() {
		for ev, err := range chromedp.Events(tabCtx, runtime.ExceptionThrown) {
			if err != nil {
				return
			}
			if d := ev.ExceptionDetails; d != nil {
				text := d.Text
				if d.Exception != nil {
					text += " " + d.Exception.Description
				}
				c.console.add(text)
			}
		}
	}()
	return c, nil
}

// chromiumVersion turns the product DevTools reports ("HeadlessChrome/156.0.8078.114")
// and V8's version into the version line: "Chromium 156.0.8078.114 (V8 15.6.1)".
func chromiumVersion(product, v8 string) string {
	if _, v, ok := strings.Cut(product, "/"); ok {
		product = "Chromium " + v
	}
	if v8 != "" {
		product += " (V8 " + v8 + ")"
	}
	return product
}

func (c *chromium) Navigate(ctx context.Context, url string) error {
	joined, cancel := c.join(ctx)
	defer cancel()
	return chromedp.Do(joined, chromedp.Navigate(url))
}

func (c *chromium) Evaluate(ctx context.Context, expression string, out any) error {
	wrapped := "(async () => { const v = await (" + expression + "\n); const s = v === undefined ? undefined : JSON.stringify(v); return s === undefined ? 'null' : s; })()"
	joined, cancel := c.join(ctx)
	defer cancel()
	text, err := chromedp.Run(joined, chromedp.Evaluate[string](wrapped, chromedp.EvalAwaitPromise))
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return decodeJSON(text, out)
}

// join returns the tab's context, ended when ctx ends too.
func (c *chromium) join(ctx context.Context) (context.Context, func()) {
	joined, cancel := context.WithCancel(c.ctx)
	stop := context.AfterFunc(ctx, cancel)
	return joined, func() { stop(); cancel() }
}

func (c *chromium) SetViewport(ctx context.Context, width, height int) error {
	joined, cancel := c.join(ctx)
	defer cancel()
	if err := chromedp.Do(joined, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		return fmt.Errorf("set chromium's viewport to %d × %d: %w", width, height, err)
	}
	return nil
}

func (c *chromium) ConsoleErrors() []string { return c.console.get() }
func (c *chromium) Version() string         { return c.version }
func (c *chromium) Kind() Kind              { return Chromium }
func (c *chromium) Pid() int                { return c.pid }

// Context is the tab's chromedp context, for what only chromedp does (clicks, key
// presses); tests that run in both browsers do without it.
func (c *chromium) Context() context.Context { return c.ctx }

func (c *chromium) Close() error {
	c.cancel() // chromedp ends the browser and what is left of it
	return removeProfile(c.profile)
}

// ChromedpContext returns the chromedp context of a Chromium page, or nil for another browser.
func ChromedpContext(p Page) context.Context {
	if c, ok := p.(*chromium); ok {
		return c.ctx
	}
	return nil
}
