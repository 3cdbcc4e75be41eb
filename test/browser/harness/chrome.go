package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// ErrNoChromium is returned by Chromium when no browser is installed.
var ErrNoChromium = errors.New("no chromium in PATH (Debian: apt-get install chromium)")

// ChromiumPath finds Debian's chromium (or another Chrome) in PATH.
func ChromiumPath() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// Browser starts a headless Chromium; cancel stops it.
func Browser(ctx context.Context) (context.Context, context.CancelFunc, error) {
	path, err := ChromiumPath()
	if err != nil {
		return nil, nil, err
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.WindowSize(1280, 900),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // CI runs as root, where the sandbox cannot start
	}
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	if err := chromedp.Do(bctx); err != nil { // starts the browser
		bcancel()
		acancel()
		return nil, nil, fmt.Errorf("starting %s: %w", path, err)
	}
	return bctx, func() { bcancel(); acancel() }, nil
}

// Tab is one page, recording what must never happen on it.
type Tab struct {
	Ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	errs   []string // uncaught exceptions, console.error, error log entries
	dialog []string // alert, confirm, prompt: none is expected
}

// NewTab opens a tab of browser at width × height.
func NewTab(browser context.Context, width, height int64) (*Tab, error) {
	t := &Tab{}
	t.Ctx, t.cancel = chromedp.NewContext(browser, chromedp.WithListener(t.listen))
	if err := chromedp.Do(t.Ctx, chromedp.EmulateViewport(width, height)); err != nil {
		t.cancel()
		return nil, err
	}
	return t, nil
}

// listen runs in the tab's event loop: record, and close dialogs from
// another goroutine so the page does not stall.
func (t *Tab) listen(ev any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg += " " + d.Exception.Description
		}
		t.errs = append(t.errs, fmt.Sprintf("uncaught exception at %s:%d: %s", d.URL, d.LineNumber, msg))
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, strings.Trim(string(a.Value), `"`)+a.Description)
			}
			t.errs = append(t.errs, "console."+string(ev.Type)+": "+strings.Join(parts, " "))
		}
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError {
			t.errs = append(t.errs, fmt.Sprintf("console error (%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
		}
	case *page.EventJavascriptDialogOpening:
		t.dialog = append(t.dialog, string(ev.Type)+": "+ev.Message)
		go chromedp.Call(t.Ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
	}
}

// Problems returns the errors and dialogs seen so far and forgets them.
func (t *Tab) Problems() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append(append([]string{}, t.errs...), t.dialog...)
	t.errs, t.dialog = nil, nil
	return out
}

// Dialogs is how many dialogs the page tried to open.
func (t *Tab) Dialogs() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string{}, t.dialog...)
}

// Close closes the tab.
func (t *Tab) Close() { t.cancel() }

// Open loads url in the tab.
func (t *Tab) Open(url string) error {
	ctx, cancel := context.WithTimeout(t.Ctx, 30*time.Second)
	defer cancel()
	return chromedp.Do(ctx, chromedp.Navigate(url))
}

// Eval evaluates a JavaScript expression and decodes its value.
func Eval[T any](t *Tab, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(t.Ctx, 30*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr))
}

// WaitFor polls the expression (on every animation frame) until it is
// truthy, for at most timeout.
func (t *Tab) WaitFor(expr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(t.Ctx, timeout)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr))
	if err != nil {
		text, _ := Eval[string](t, `document.body ? document.body.innerText : ''`)
		return fmt.Errorf("waiting %v for %s: %v; the page says:\n%s", timeout, expr, err, text)
	}
	return nil
}

// Text is the visible text of the page's main view.
func (t *Tab) Text() (string, error) {
	return Eval[string](t, `document.getElementById('view').innerText`)
}

// Screenshot captures the viewport as PNG.
func (t *Tab) Screenshot() ([]byte, error) {
	ctx, cancel := context.WithTimeout(t.Ctx, 30*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.CaptureScreenshot())
}

// FullScreenshot captures the whole page as PNG.
func (t *Tab) FullScreenshot() ([]byte, error) {
	ctx, cancel := context.WithTimeout(t.Ctx, 30*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.FullScreenshot(100))
}
