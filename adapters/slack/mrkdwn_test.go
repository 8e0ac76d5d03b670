package slack_test

import (
	"strings"
	"testing"

	"github.com/opsgate/opsgate/adapters/render/rendertest"
	"github.com/opsgate/opsgate/adapters/slack"
	"github.com/opsgate/opsgate/adapters/slack/slacktest"
)

func TestMrkdwn(t *testing.T) {
	cases := []struct {
		name, md, want string
	}{
		{"bold", "**web** is down", "*web* is down"},
		{"underscore bold", "__web__ is down", "*web* is down"},
		{"italic", "it is *probably* DNS", "it is _probably_ DNS"},
		{"strike", "~~healthy~~ degraded", "~healthy~ degraded"},
		{"heading", "## Findings", "*Findings*"},
		{"code span", "run `kubectl get pods`", "run `kubectl get pods`"},
		{"link", "see [the runbook](https://runbooks.example.com/web?a=1&b=2)", "see <https://runbooks.example.com/web?a=1&amp;b=2|the runbook>"},
		{"bare link label", "[https://example.com](https://example.com)", "<https://example.com>"},
		{"unsafe link stays text", "[click](javascript:alert(1))", "[click](javascript:alert(1))"},
		{"escaping", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"no mention injection", "ping <@U0ADMIN> and <!channel>", "ping &lt;@U0ADMIN&gt; and &lt;!channel&gt;"},
		{"escaped in code", "`if a<b`", "`if a&lt;b`"},
		{"fence", "```go\nif a < b {\n}\n```", "```\nif a &lt; b {\n}\n```"},
		{"list", "- one\n- two", "• one\n• two"},
		{"snake_case", "the pod_name_here field", "the pod_name_here field"},
		{"unclosed", "**not closed", "**not closed"},
		{"backtick in code", "``a`b``", "`aˋb`"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := slack.Mrkdwn(c.md); got != c.want {
				t.Errorf("Mrkdwn(%q) = %q, want %q", c.md, got, c.want)
			}
		})
	}
}

// What Slack shows of the converted text is what the Markdown said.
func TestMrkdwnReadsAsWritten(t *testing.T) {
	md := "**Summary**: 3 pods <CrashLoopBackOff> & 1 `Pending`; see [logs](https://logs.example.com/x)."
	want := "Summary: 3 pods <CrashLoopBackOff> & 1 Pending; see logs."
	if got := slacktest.Plain(slack.Mrkdwn(md)); got != want {
		t.Errorf("reader sees %q, want %q", got, want)
	}
	if got := slack.Mrkdwn(strings.Repeat("&", 10)); got != strings.Repeat("&amp;", 10) {
		t.Errorf("ampersands: %q", got)
	}
}

// BenchmarkMrkdwn converts a message-sized reply, as every streamed edit
// does.
func BenchmarkMrkdwn(b *testing.B) {
	md, _ := rendertest.LongAnswer(slack.MaxText, 25)
	b.SetBytes(int64(len(md)))
	for b.Loop() {
		slack.Mrkdwn(md)
	}
}
