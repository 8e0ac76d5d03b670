// Package browsertest drives a real headless Chromium from Go tests
// (through chromedp, without Node), so that the web console is tested as a
// person uses it: pages load, scripts run under the real CSP, buttons are
// clicked and what is on screen is read back.
//
// [New] finds the browser ($OPSGATE_CHROMIUM, then the usual names on
// PATH). Without one the test is skipped with a loud message, except under
// CI=true, where that is a failure: CI must never report green for a suite
// it did not run. Every wait has a deadline and polls the page; nothing
// sleeps. A JavaScript exception, a console.error or a security (CSP)
// violation in the page fails the test.
package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// EnvPath names the Chromium binary to use.
const EnvPath = "OPSGATE_CHROMIUM"

// Timeout bounds each wait and action of a Browser.
const Timeout = 30 * time.Second

// Width and Height are the page's viewport (and a screenshot's size).
const (
	Width  = 1440
	Height = 900
)

// Browser is one headless Chromium with one tab, owned by one test. Its
// methods fail the test on error; they are not safe for concurrent use.
type Browser struct {
	t   testing.TB
	ctx context.Context // the tab's

	mu      sync.Mutex
	errs    []string      // JS exceptions, console errors, CSP violations
	changed chan struct{} // closed (and replaced) when errs grows
}

// Find returns the path of a Chromium binary, or an error saying how to
// install one.
func Find() (string, error) {
	if p := os.Getenv(EnvPath); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("browsertest: $%s=%s: %w", EnvPath, p, err)
		}
		return p, nil
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("browsertest: Chromium not found; apt-get install chromium (or set $" + EnvPath + ")")
}

// New starts a browser for t and stops it when t ends. Without Chromium
// it skips t (fails it under CI=true).
func New(t testing.TB) *Browser {
	t.Helper()
	path, err := Find()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no browser: %v", err)
		}
		msg := "browser tests SKIPPED: Chromium not found; apt-get install chromium (" + t.Name() + ")"
		fmt.Fprintln(os.Stderr, "!!! "+msg)
		t.Skip(msg)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		// LIBRARIES.md §9: as root Chromium needs no-sandbox; without the
		// networking flags it keeps dialling outside hosts.
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(Width, Height),
	)
	b := &Browser{t: t, changed: make(chan struct{})}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc) // kills the process and waits for it
	ctx, cancel := chromedp.NewContext(allocCtx,
		chromedp.WithLogf(t.Logf),
		chromedp.WithListener(b.listen),
	)
	t.Cleanup(cancel)
	b.ctx = ctx
	// The first Do starts the browser; it must have no deadline (it would
	// bound the browser's life).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("browsertest: start %s: %v", path, err)
	}
	// The window's size includes what headless Chromium keeps for its
	// frame; the page gets exactly Width x Height.
	b.Do("set the viewport", chromedp.EmulateViewport(Width, Height))
	t.Cleanup(func() {
		if errs := b.Errors(); len(errs) > 0 {
			t.Errorf("the page reported errors:\n  %s", strings.Join(errs, "\n  "))
		}
	})
	return b
}

// listen collects what a page must never report. It runs in the tab's
// message loop: it returns at once and runs no command.
func (b *Browser) listen(ev any) {
	var msg string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg = "exception: " + d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg += " " + d.Exception.Description
		}
		msg += fmt.Sprintf(" (%s:%d)", d.URL, d.LineNumber+1)
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError {
			return
		}
		var parts []string
		for _, a := range ev.Args {
			if a.Description != "" {
				parts = append(parts, a.Description)
			} else {
				parts = append(parts, string(a.Value))
			}
		}
		msg = "console.error: " + strings.Join(parts, " ")
	case *log.EventEntryAdded:
		// Network errors are the API's answers (a 401 for a wrong token is
		// expected); what else the browser logs as an error — a CSP
		// violation above all — is a bug of the page.
		if ev.Entry.Level != log.EntryLevelError || ev.Entry.Source == log.EntrySourceNetwork {
			return
		}
		msg = fmt.Sprintf("browser log (%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
	default:
		return
	}
	b.mu.Lock()
	b.errs = append(b.errs, msg)
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// Errors returns what the page reported so far.
func (b *Browser) Errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errs...)
}

// TakeErrors returns what the page reported so far and forgets it, for a
// test that provokes an error on purpose.
func (b *Browser) TakeErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	errs := b.errs
	b.errs = nil
	return errs
}

// WaitError waits until the page reported an error containing text.
func (b *Browser) WaitError(text string) string {
	b.t.Helper()
	deadline := time.NewTimer(Timeout)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		changed := b.changed
		for _, e := range b.errs {
			if strings.Contains(e, text) {
				b.mu.Unlock()
				return e
			}
		}
		b.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			b.t.Fatalf("browser: no page error containing %q within %s; errors: %q", text, Timeout, b.Errors())
			return ""
		}
	}
}

// Context is the tab's context, for chromedp actions the helpers lack.
func (b *Browser) Context() context.Context { return b.ctx }

// Do runs actions within Timeout, failing the test on error.
func (b *Browser) Do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.fatal(what, err)
	}
}

// fatal fails the test with what the page reported, which usually says
// why an element never appeared.
func (b *Browser) fatal(what string, err error) {
	b.t.Helper()
	msg := fmt.Sprintf("browser: %s: %v", what, err)
	if errs := b.Errors(); len(errs) > 0 {
		msg += "\npage errors:\n  " + strings.Join(errs, "\n  ")
	}
	// What the page shows usually says why an element never appeared.
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	if text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`)); err == nil {
		msg += "\npage:\n" + text
	}
	b.t.Fatal(msg)
}

// Navigate loads url.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	b.Do("navigate to "+url, chromedp.Navigate(url))
}

// Click clicks the first element matching the CSS selector once it is
// visible.
func (b *Browser) Click(sel string) {
	b.t.Helper()
	b.Do("click "+sel, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// Type focuses the element matching sel and types text into it (a
// trailing "\r" presses Enter).
func (b *Browser) Type(sel, text string) {
	b.t.Helper()
	b.Do("type into "+sel, chromedp.SendKeys(chromedp.CSS(sel), text, chromedp.NodeVisible))
}

// Clear empties the input matching sel.
func (b *Browser) Clear(sel string) {
	b.t.Helper()
	b.Eval(fmt.Sprintf(`(document.querySelector(%s).value = "")`, jsString(sel)))
}

// jsString quotes s for JavaScript source.
func jsString(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// Keys sends key presses to whatever has the focus.
func (b *Browser) Keys(keys string) {
	b.t.Helper()
	b.Do("press "+keys, chromedp.KeyEvent(keys))
}

// WaitVisible waits until an element matching sel is visible.
func (b *Browser) WaitVisible(sel string) {
	b.t.Helper()
	b.Do("wait for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
}

// WaitText waits until some element matching sel contains text, and
// returns that element's text.
func (b *Browser) WaitText(sel, text string) string {
	b.t.Helper()
	return b.WaitFunc(fmt.Sprintf("an element %s containing %q", sel, text), `(sel, text) => {
		for (const el of document.querySelectorAll(sel)) {
			if (el.textContent.includes(text)) return el.textContent;
		}
		return null;
	}`, sel, text)
}

// WaitFunc waits until the JavaScript function fn, called with args,
// returns a truthy value, and returns that value as text (a string as it
// is, anything else as JSON).
func (b *Browser) WaitFunc(what, fn string, args ...any) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.PollFunction[any](fn,
		chromedp.WithPollingArgs(args...),
		chromedp.WithPollingInterval(25*time.Millisecond),
		chromedp.WithPollingTimeout(Timeout)))
	if err != nil {
		b.fatal("wait for "+what, err)
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// Text returns the text of the first element matching sel.
func (b *Browser) Text(sel string) string {
	b.t.Helper()
	return b.Eval(fmt.Sprintf(`(document.querySelector(%s) || {}).textContent || ""`, jsString(sel)))
}

// Eval evaluates a JavaScript expression yielding a string, or a promise
// of one (which it awaits).
func (b *Browser) Eval(expr string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.fatal("evaluate "+expr, err)
	}
	return s
}

// HTML returns the page's DOM as it stands, serialised: what a person's
// browser holds, to check nothing secret reached it.
func (b *Browser) HTML() string {
	b.t.Helper()
	return b.Eval(`document.documentElement.outerHTML`)
}

// Screenshot returns a PNG of the window (Width x Height).
func (b *Browser) Screenshot() []byte {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.fatal("screenshot", err)
	}
	return png
}
