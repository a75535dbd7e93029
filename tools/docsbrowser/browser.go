package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// stepTimeout bounds one wait in the page: a wait that never ends is a
// failure with the step's name, not a hung run.
const stepTimeout = 60 * time.Second

type browser struct {
	ctx    context.Context
	cancel func()
}

func newBrowser(ctx context.Context, path string) (*browser, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("browser: %w (scripts/docs-browser.sh installs Debian's chromium)", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1280, 1400),
		// Root in a container has no user namespace for Chromium's sandbox.
		chromedp.NoSandbox)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	if err := chromedp.Do(bctx); err != nil {
		bcancel()
		acancel()
		return nil, fmt.Errorf("browser: start %s: %w", path, err)
	}
	return &browser{ctx: bctx, cancel: func() { bcancel(); acancel() }}, nil
}

func (b *browser) close() { b.cancel() }

// pageProblems collects what the page reports as going wrong: uncaught
// exceptions, console errors and the browser's own errors, such as a
// request the Content-Security-Policy refused.
type pageProblems struct {
	mu   sync.Mutex
	list []string
}

func (p *pageProblems) add(s string) {
	p.mu.Lock()
	p.list = append(p.list, s)
	p.mu.Unlock()
}

func (p *pageProblems) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.list...)
}

// check runs every check of one service in a tab of its own and saves a
// screenshot of the executed call to shot.
func (b *browser) check(ctx context.Context, s service, shot string) (report []string, err error) {
	tab, cancel := chromedp.NewContext(b.ctx)
	defer cancel()
	stopOnCtx := context.AfterFunc(ctx, cancel)
	defer stopOnCtx()

	problems := &pageProblems{}
	// A failed step says what the page reported before it.
	defer func() {
		if p := problems.all(); err != nil && len(p) > 0 {
			err = fmt.Errorf("%w\nthe page reported %d problems:\n  %s", err, len(p), strings.Join(p, "\n  "))
		}
	}()
	if err := chromedp.Listen(tab, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			text := d.Text
			if d.Exception != nil {
				text += " " + d.Exception.Description
			}
			problems.add("exception: " + text)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, a.Description+string(a.Value))
				}
				problems.add("console error: " + strings.Join(parts, " "))
			}
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError {
				problems.add(fmt.Sprintf("browser %s error: %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		}
	}); err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	if _, err := chromedp.Call(tab, cdplog.Enable, cdp.Empty{}); err != nil {
		return nil, fmt.Errorf("enable log: %w", err)
	}

	// Every operation of every document is rendered, each document chosen
	// in the page's selector by its name.
	for i, d := range s.docs {
		raw, err := fetch(ctx, s.base+d.url)
		if err != nil {
			return report, err
		}
		want, err := operations(raw)
		if err != nil {
			return report, fmt.Errorf("%s: %w", d.url, err)
		}
		page := s.base + "/docs"
		if i > 0 {
			page += "?urls.primaryName=" + url.QueryEscape(d.name)
		}
		got, err := renderedOperations(tab, page, d, len(s.docs) > 1)
		if err != nil {
			return report, fmt.Errorf("%s: %w", d.name, err)
		}
		missing, extra := diff(want, got)
		if len(missing) > 0 || len(extra) > 0 {
			return report, fmt.Errorf("%s: the page renders %d operations, the document has %d; not rendered: %v; not in the document: %v",
				d.name, len(got), len(want), missing, extra)
		}
		report = append(report, fmt.Sprintf("%s (%s): all %d operations of the document rendered", d.name, d.url, len(got)))
	}

	status, body, err := tryIt(tab, s)
	if png, shotErr := step(tab, "screenshot", chromedp.FullScreenshot(100)); shotErr == nil {
		if werr := os.WriteFile(shot, png, 0o644); werr != nil && err == nil {
			err = fmt.Errorf("screenshot: %w", werr)
		}
	} else if err == nil {
		err = shotErr
	}
	if err != nil {
		return report, err
	}
	if status != "200" {
		return report, fmt.Errorf("try it %s %s: status %q, want 200; body %.300s", s.try.method, s.try.path, status, body)
	}
	if !strings.Contains(body, s.try.want) {
		return report, fmt.Errorf("try it %s %s: 200 without %q in the body: %.300s", s.try.method, s.try.path, s.try.want, body)
	}
	report = append(report, fmt.Sprintf("try it %s %s with the demo key (%s): 200, %d bytes holding %q", s.try.method, s.try.path, s.scheme, len(body), s.try.want))

	if len(problems.all()) > 0 {
		return report, errors.New("the page must work without a problem")
	}
	report = append(report, "no exception, console error or Content-Security-Policy violation")
	return report, nil
}

// step runs one action with its own bound and names it in the error.
func step[T any](ctx context.Context, name string, a chromedp.Action[T]) (T, error) {
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		return v, fmt.Errorf("step %q: %w", name, err)
	}
	return v, nil
}

func do(ctx context.Context, name string, a chromedp.Action[chromedp.Void]) error {
	_, err := step(ctx, name, a)
	return err
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// renderedOperations loads page and returns the operations Swagger UI
// renders, as "GET /v1/eod". With a selector, it must show d as chosen.
// The path is read from data-path, which deprecated operations carry too
// (their path has another class).
func renderedOperations(tab context.Context, page string, d document, selector bool) ([]string, error) {
	if err := do(tab, "load "+page, chromedp.Navigate(page)); err != nil {
		return nil, err
	}
	// Rendered: the document's title block and its operations are there,
	// and Swagger UI shows no error in place of the document.
	if _, err := step(tab, "wait for Swagger UI to render", chromedp.Poll[bool](
		`document.querySelector('.information-container .title') !== null && document.querySelectorAll('.opblock').length > 0`)); err != nil {
		return nil, err
	}
	if selector {
		chosen, err := step(tab, "read the document selector", chromedp.Evaluate[[]string](
			`(function(){var s=document.querySelector('.topbar select'); if(!s) return []; return [s.value].concat(Array.from(s.options).map(function(o){return o.textContent}))})()`))
		if err != nil {
			return nil, err
		}
		if len(chosen) == 0 || chosen[0] != d.url {
			return nil, fmt.Errorf("the selector shows %v, want %s chosen", chosen, d.url)
		}
	}
	return step(tab, "collect the rendered operations", chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('.opblock')).map(function(o){
			var m = o.querySelector('.opblock-summary-method'), p = o.querySelector('[data-path]');
			return (m ? m.textContent.trim() : '?') + ' ' + (p ? p.getAttribute('data-path') : '?');
		})`))
}

// tryIt authorizes with the service's key, opens its operation, fills the
// parameters, executes it and returns the status and body Swagger UI shows.
func tryIt(tab context.Context, s service) (status, body string, err error) {
	page := s.base + "/docs"
	if err := do(tab, "load "+page, chromedp.Navigate(page)); err != nil {
		return "", "", err
	}
	if _, err := step(tab, "wait for Swagger UI to render", chromedp.Poll[bool](`document.querySelectorAll('.opblock').length > 0`)); err != nil {
		return "", "", err
	}

	// Authorize: the scheme's form in the dialog, as a user fills it.
	if err := do(tab, "open Authorize", chromedp.Click(chromedp.CSS(".auth-wrapper .authorize"))); err != nil {
		return "", "", err
	}
	if err := do(tab, "wait for the dialog", chromedp.WaitVisible(chromedp.CSS(".modal-ux .auth-container"))); err != nil {
		return "", "", err
	}
	found, err := step(tab, "find the "+s.scheme+" form", chromedp.Evaluate[bool](`(function(){
		var cs = document.querySelectorAll('.modal-ux .auth-container');
		for (var i = 0; i < cs.length; i++) {
			var h = cs[i].querySelector('h4');
			if (h && h.textContent.indexOf(`+jsString(s.scheme)+`) >= 0) { cs[i].setAttribute('data-docsbrowser', 'auth'); return true; }
		}
		return false;
	})()`))
	if err != nil {
		return "", "", err
	}
	if !found {
		return "", "", fmt.Errorf("the Authorize dialog has no form for the %s scheme", s.scheme)
	}
	if err := do(tab, "type the key", chromedp.SendKeys(chromedp.CSS(`[data-docsbrowser=auth] input`), s.key)); err != nil {
		return "", "", err
	}
	if err := do(tab, "submit the key", chromedp.Click(chromedp.CSS(`[data-docsbrowser=auth] button[type=submit]`))); err != nil {
		return "", "", err
	}
	if err := do(tab, "close the dialog", chromedp.Click(chromedp.CSS(`.modal-ux .btn-done`))); err != nil {
		return "", "", err
	}
	if err := do(tab, "see the lock closed", chromedp.WaitVisible(chromedp.CSS(".auth-wrapper .authorize.locked"))); err != nil {
		return "", "", err
	}

	// The operation: expanded, "Try it out", parameters, "Execute".
	found, err = step(tab, "find "+s.try.method+" "+s.try.path, chromedp.Evaluate[bool](`(function(){
		var ops = document.querySelectorAll('.opblock');
		for (var i = 0; i < ops.length; i++) {
			var m = ops[i].querySelector('.opblock-summary-method'), p = ops[i].querySelector('[data-path]');
			if (m && p && m.textContent.trim() === `+jsString(s.try.method)+` && p.getAttribute('data-path') === `+jsString(s.try.path)+`) {
				ops[i].setAttribute('data-docsbrowser', 'op'); return true;
			}
		}
		return false;
	})()`))
	if err != nil {
		return "", "", err
	}
	if !found {
		return "", "", fmt.Errorf("no rendered operation %s %s", s.try.method, s.try.path)
	}
	op := `[data-docsbrowser=op] `
	for _, a := range []struct {
		name   string
		action chromedp.Action[chromedp.Void]
	}{
		{"expand the operation", chromedp.Click(chromedp.CSS(op + ".opblock-summary-control"))},
		{"Try it out", chromedp.Click(chromedp.CSS(op + ".try-out__btn"))},
	} {
		if err := do(tab, a.name, a.action); err != nil {
			return "", "", err
		}
	}
	for name, value := range s.try.params {
		if err := do(tab, "fill "+name, chromedp.SendKeys(chromedp.CSS(op+`tr[data-param-name=`+jsString(name)+`] input`), value)); err != nil {
			return "", "", err
		}
	}
	if err := do(tab, "Execute", chromedp.Click(chromedp.CSS(op+".execute"))); err != nil {
		return "", "", err
	}
	if err := do(tab, "wait for the response", chromedp.WaitVisible(chromedp.CSS(op+".live-responses-table .response-col_status"))); err != nil {
		return "", "", err
	}
	_ = do(tab, "scroll to the response", chromedp.ScrollIntoView(chromedp.CSS(op+".live-responses-table")))
	got, err := step(tab, "read the response", chromedp.Evaluate[[]string](`(function(){
		var t = document.querySelector('[data-docsbrowser=op] .live-responses-table');
		var st = t.querySelector('.response .response-col_status'), b = t.querySelector('.response-col_description pre');
		return [st ? st.textContent.trim() : '', b ? b.textContent : ''];
	})()`))
	if err != nil {
		return "", "", err
	}
	return got[0], got[1], nil
}
