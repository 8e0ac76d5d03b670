package slack

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/slack-go/slack"
)

// FuzzMrkdwn converts arbitrary Markdown to Slack's mrkdwn and Block Kit.
// Nothing the model writes can mention anyone or forge a link: every "<"
// of the mrkdwn opens a link to a safe URL the Markdown had, and every "&"
// is one of Slack's three escapes. The blocks keep Slack's limits (50
// blocks, 3000 characters a section, 11000 in all for mrkdwn, 75 for a
// button label) and encode as JSON; the button carries its data as it is.
func FuzzMrkdwn(f *testing.F) {
	for _, s := range []string{
		"<!channel> <@U0ALICE> <#C0OPS|ops> & <https://evil.example|bank>",
		"**bold** _it_ ~~gone~~ `a|b` [docs](https://example.com/a|b) [x](mailto:a@b.c)",
		"```\n<!here>\n```x```\n```\n# head\n- item",
		"[](https://example.com) [https://example.com](https://example.com) [a](javascript:x)",
	} {
		f.Add(s, false, "✅ Approve", "a:0123456789abcdef0123456789abcdef")
	}
	f.Add(strings.Repeat("`x` & <y> ", 400), true, strings.Repeat("é", 80), "s:run")
	f.Fuzz(func(t *testing.T, md string, plain bool, label, data string) {
		if len(md) > 40000 {
			t.Skip()
		}
		checkMrkdwn(t, md, Mrkdwn(md))
		m := render.Message{Text: md, Plain: plain, Buttons: []render.Button{{Label: label, Data: data}}}
		blocks, fallback := toBlocks(m, &confirms{})
		if len(blocks) > maxBlocks || fallback == "" {
			t.Fatalf("%d blocks, fallback %q", len(blocks), fallback)
		}
		total, markdown := 0, false
		for _, b := range blocks {
			switch b := b.(type) {
			case *slack.SectionBlock:
				if n := render.Len(b.Text.Text); n > maxSection || n == 0 {
					t.Fatalf("a section of %d characters", n)
				}
				total += render.Len(b.Text.Text)
				if b.Text.Type == slack.MarkdownType {
					markdown = true
					checkMrkdwn(t, md, b.Text.Text)
				}
			case *slack.ActionBlock:
				btn := b.Elements.ElementSet[0].(*slack.ButtonBlockElement)
				if btn.Value != data || utf8.RuneCountInString(btn.Text.Text) > maxButtonLabel {
					t.Fatalf("button value %q label %q from data %q label %q", btn.Value, btn.Text.Text, data, label)
				}
			}
		}
		if markdown && total > blockTextBudget {
			t.Fatalf("%d characters of mrkdwn, over %d", total, blockTextBudget)
		}
		if _, err := json.Marshal(blocks); err != nil {
			t.Fatal(err)
		}
	})
}

// checkMrkdwn fails unless every "<" of out opens a link to a safe URL
// that md holds, and every "&" is an escape.
func checkMrkdwn(t *testing.T, md, out string) {
	t.Helper()
	for i := 0; i < len(out); i++ {
		switch out[i] {
		case '<':
			end := strings.IndexByte(out[i:], '>')
			if end < 0 {
				t.Fatalf("unclosed < in %q (from %q)", out, md)
			}
			target, _, _ := strings.Cut(out[i+1:i+end], "|")
			u := strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "%7C", "|").Replace(target)
			if !render.SafeURL(u) || !strings.Contains(md, u) {
				t.Fatalf("link <%s> in %q is not a safe URL of the Markdown %q", target, out, md)
			}
			i += end
		case '>':
			t.Fatalf("bare > in %q (from %q)", out, md)
		case '&':
			if !strings.HasPrefix(out[i:], "&amp;") && !strings.HasPrefix(out[i:], "&lt;") && !strings.HasPrefix(out[i:], "&gt;") {
				t.Fatalf("bare & in %q (from %q)", out, md)
			}
		}
	}
}
