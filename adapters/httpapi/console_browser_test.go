package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/internal/browsertest"
)

// consoleSecret is in a tool's arguments and result and in the model's
// answer; the console must never hold it.
const consoleSecret = "AKIAIOSFODNN7EXAMPLE"

// consoleURL serves the console beside the rig's API, on one origin as
// serve does (the API through a proxy to the rig's server).
func (r *rig) consoleURL() string {
	api, err := url.Parse(r.srv.URL)
	if err != nil {
		r.t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(api)
	proxy.FlushInterval = -1 // event streams pass at once
	mux := http.NewServeMux()
	mux.Handle(httpapi.Prefix, proxy)
	mux.Handle("/", httpapi.Console())
	srv := httptest.NewServer(mux)
	r.t.Cleanup(srv.Close)
	return srv.URL
}

// signIn submits token on the login form.
func signIn(b *browsertest.Browser, token string) {
	b.WaitVisible("#token")
	b.Clear("#token")
	b.Type("#token", token)
	b.Click("#login-submit")
}

// assertNoSecret fails when the page's DOM holds the secret.
func assertNoSecret(t *testing.T, b *browsertest.Browser, where string) {
	t.Helper()
	if html := b.HTML(); strings.Contains(html, consoleSecret) || strings.Contains(html, consoleSecret[:10]) {
		t.Errorf("%s: the page holds the secret %s", where, consoleSecret)
	}
}

// Issue 13 (the console over the real API): sign in (a wrong token is
// refused with the API's message), list conversations, read one whose
// tool result held a secret, see the pending approval, have the policy's
// refusal shown on the card, approve it, find the decision in the audit
// log, search memory.
func TestConsoleInBrowser(t *testing.T) {
	b := browsertest.New(t)
	r := newRig(t, withMemory(t))
	if r.red.String(consoleSecret) == consoleSecret {
		t.Fatalf("the redactor does not know %s; pick another secret", consoleSecret)
	}
	const secretConv = "telegram:bot:logs"
	r.stack.LLM.Push(
		toolCalls(call("c1", "get_logs", `{"pod":"`+consoleSecret+`","tail":2}`)),
		llmfake.Reply{Text: "The logs of " + consoleSecret + " look healthy."},
	)
	if err := r.eng.Handle(t.Context(), core.Inbound{ConvKey: secretConv, MessageID: "s1", User: carol, Text: "logs of " + consoleSecret, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	r.rec.WaitCompleted(t, 1)
	a := r.pauseForScale()
	base := r.consoleURL()

	// Sign in: a wrong token is refused with the API's message.
	b.Navigate(base + "/")
	signIn(b, httpapi.TokenPrefix+"wrong")
	b.WaitText("#login-error", "refused (401)")
	signIn(b, r.tokens["bob"])

	// Conversations: both, with their platform and latest run.
	row := `tr[data-key="` + conv + `"]`
	b.WaitText(row+" td", "telegram")
	b.WaitText(row+` [data-role="run-status"]`, "awaiting approval")
	b.WaitText(`tr[data-key="`+secretConv+`"] [data-role="run-status"]`, "done")
	assertNoSecret(t, b, "conversations")

	// The conversation with the secret: its tool line and answer, redacted.
	b.Click(`tr[data-key="` + secretConv + `"] a.conv-link`)
	b.WaitText(".tool-line", "get_logs")
	b.WaitText(".text.assistant", "look healthy")
	b.WaitText(".tool-line pre.result", "[REDACTED:")
	assertNoSecret(t, b, "conversation "+secretConv)

	// Approvals, by keyboard: bob may not approve (the policy says who).
	b.Eval(`document.activeElement && document.activeElement.blur(), ""`)
	b.Keys("ga")
	card := `article.approval[data-approval="` + a.ID + `"]`
	b.WaitText(card, "scale_deployment")
	b.WaitText(card+" .conv", "telegram")
	b.WaitText(card+` [data-role="quorum"]`, "0 of 1 approval")
	b.WaitText(card+` [data-role="requester"]`, "carol")
	b.Click(card + " button.approve")
	b.WaitText(card+` [data-role="error"]`, "sre")

	// alice approves; the card shows the outcome and the run resumes.
	b.Click("#signout")
	signIn(b, r.tokens["alice"])
	b.WaitVisible("#conv-rows")
	b.Navigate(base + "/#/approvals")
	// By keyboard: in a focused card "a" goes to Approve, Enter presses it.
	b.WaitVisible(card)
	b.Eval(`document.querySelector(` + "`" + card + "`" + `).focus(), ""`)
	b.Keys("a")
	if got := b.Eval(`document.activeElement.dataset.action || ""`); got != "approve" {
		t.Fatalf("after a, the focus is on %q, want the Approve button", got)
	}
	b.Keys("\r")
	b.WaitText(card+` [data-role="outcome"]`, "Approved by alice")
	if done := r.rec.WaitCompleted(t, 3); done.Status != core.RunDone {
		t.Errorf("resumed run = %+v, want done", done)
	}
	assertNoSecret(t, b, "approvals")

	// The audit log finds the decision.
	b.Keys("gu")
	b.WaitVisible("#audit-q")
	b.Keys("/")
	if got := b.Eval(`document.activeElement.id`); got != "audit-q" {
		t.Fatalf("after /, the focus is on %q, want the search box", got)
	}
	// CDP sends the "/" as a character event of its own, which the page's
	// keydown handler cannot cancel as it does in a real browser.
	b.Clear("#audit-q")
	b.Keys(a.ID + "\r")
	b.WaitText(`#audit-rows tr[data-kind="approved"]`, "api:alice")
	b.WaitText(`#audit-rows tr[data-kind="refused"]`, "api:bob")
	assertNoSecret(t, b, "audit")

	// Memory. Escape leaves the search box, so keys are shortcuts again.
	b.Keys("\u001b")
	b.Keys("gm")
	b.Type("#memory-q", "payments rollback\r")
	b.WaitText(`#memory-results [data-path="payments-rollback.md"]`, "Payments rollback")
	assertNoSecret(t, b, "memory")
}
