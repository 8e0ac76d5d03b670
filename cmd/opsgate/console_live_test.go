package main

import (
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/internal/browsertest"
)

// slackRow waits for the Slack conversation on the conversations page and
// returns its key.
func slackRow(b *browsertest.Browser, status string) string {
	return b.WaitFunc("a Slack conversation "+status, `(status) => {
		for (const tr of document.querySelectorAll('#conv-rows tr[data-key^="slack:"]')) {
			if (tr.querySelector('[data-role="run-status"]').textContent.includes(status)) return tr.dataset.key;
		}
		return null;
	}`, status)
}

// Issue 13 acceptance 5: alice asks in Slack; the model streams text, then
// asks to scale. bob follows the run live in the console: the text
// streams in, the approval card appears, his Approve runs the tool (its
// line turns done), the answer follows, and Slack's card names him.
func TestConsoleApprovesSlackRun(t *testing.T) {
	hold := make(chan struct{})
	c := newConsoleServe(t, []string{"slack"},
		toolCall("c0", "load_toolset", `{"toolset":"k8s","include_write_tools":true}`),
		llmfake.Reply{Text: "Scaling web to 3 replicas, as you asked.", Hold: hold,
			ToolCalls: []llmfake.ToolCall{{ID: "c1", Name: "scale_deployment", Arguments: `{"name":"web","replicas":3}`}}},
		llmfake.Reply{Text: "Web runs 3 replicas now."},
	)
	b := c.console()

	root, ev := c.sl.Mention("C0OPS", aliceSlack, "scale web to 3", "")
	c.sl.SendEvent(t, ev)
	// The model has sent its first word and holds the rest.
	c.model.WaitRequests(2, 20*time.Second)

	b.Keys("gc") // reloads the list, loaded before alice asked
	key := slackRow(b, "running")
	b.Click(`tr[data-key="` + key + `"] a.conv-link`)
	b.WaitText(`[data-role="live-state"]`, "live")
	b.WaitText(".text.user", "scale web to 3")
	b.WaitText(".run .text.assistant", "Scaling")
	close(hold)
	b.WaitText(".run .text.assistant", "Scaling web to 3 replicas, as you asked.")

	card := "article.approval"
	b.WaitText(card, "scale_deployment")
	b.WaitText(card+` [data-role="requester"]`, "alice")
	b.WaitText(card+` [data-role="quorum"]`, "0 of 1 approval")
	b.WaitText(`.tool-line[data-call="c1"]`, "awaiting approval")
	b.Click(card + " button.approve")
	b.WaitText(card+` [data-role="outcome"]`, "Approved by bob")
	b.WaitText(`.tool-line[data-call="c1"][data-state="done"]`, "✅ scale_deployment")
	b.WaitText(".run .text.assistant", "Web runs 3 replicas now.")
	b.WaitText(`.run [data-role="run-status"]`, "done")
	b.Eval(`document.activeElement.blur(), window.scrollTo(0, 0), ""`)
	saveScreenshot(t, b, "console.png", true)

	slackCard := c.slackCard(root)
	c.sl.Eventually(t, "the Slack card to show bob's approval", func() bool {
		m, _ := c.sl.Message(slackCard.Channel, slackCard.TS)
		return strings.Contains(m.Plain(), "Approved by") && strings.Contains(m.Plain(), "bob") && len(m.Buttons()) == 0
	})
	if calls := c.k8s.Calls(); len(calls) != 1 || calls[0].Tool != "scale_deployment" {
		t.Errorf("MCP calls = %+v, want scale_deployment once", calls)
	}
	c.s.stop(t)
}

// consoleSecret is an AWS key id the redactor knows.
const consoleSecret = "AKIAIOSFODNN7EXAMPLE"

// Issue 13 acceptance 8, in the browser: a secret in a tool's arguments
// and result and in the model's streamed answer (cut across tokens) is in
// no page's bytes: the live run as it streamed, the same conversation
// loaded from the store, the list, the approvals, the audit.
func TestConsoleNeverShowsSecrets(t *testing.T) {
	c := newConsoleServe(t, []string{"slack"},
		toolCall("c1", "get_logs", `{"pod":"`+consoleSecret+`","tail":2}`),
		llmfake.Reply{Text: "The pod " + consoleSecret + " is healthy.", SplitChars: 3},
	)
	b := c.console()
	pages := map[string]string{}
	keep := func(name string) {
		t.Helper()
		pages[name] = b.HTML()
	}

	// A new API conversation, sent from the console: its run streams in.
	// It does not exist yet: nothing to follow (404) until it is sent.
	b.Type("#new-name", "secrets\r")
	b.WaitText("p.muted", "A new conversation: send the first message below.")
	b.Type("#compose", "show me the logs of the payments pod")
	b.Click("#send")
	b.WaitText(`.tool-line[data-call="c1"][data-state="done"]`, "get_logs")
	b.WaitText(".run .text.assistant", "is healthy.")
	b.WaitText(`.run [data-role="run-status"]`, "done")
	b.WaitText(`.tool-line[data-call="c1"] pre.result`, "[REDACTED:")
	keep("the live run")

	// The same from the store.
	b.Navigate(c.s.base + "/#/conversations")
	b.WaitText(`tr[data-key="api:secrets"] [data-role="run-status"]`, "done")
	keep("conversations")
	b.Click(`tr[data-key="api:secrets"] a.conv-link`)
	b.WaitText(".run .text.assistant", "is healthy.")
	b.WaitText(`.tool-line[data-call="c1"] pre.result`, "[REDACTED:")
	keep("the stored run")

	b.Keys("ga")
	b.WaitText(`[data-role="approvals-status"]`, "Nothing is waiting")
	keep("approvals")
	b.Keys("gu")
	b.WaitText(`#audit-rows`, "get_logs")
	keep("audit")

	// The tool had the secret and its result (the fixture echoes the pod)
	// held it: the pages' silence is the redactor's doing.
	if calls := c.k8s.Calls(); len(calls) != 1 || calls[0].Args["pod"] != consoleSecret {
		t.Fatalf("MCP calls = %+v, want get_logs of the secret pod; the test proves nothing", calls)
	}
	for name, page := range pages {
		for _, s := range []string{consoleSecret, consoleSecret[:12], c.bob} {
			if strings.Contains(page, s) {
				t.Errorf("%s holds %.12s…", name, s)
			}
		}
	}
	c.s.stop(t)
}
