package telegram

import (
	"strings"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
)

// FuzzHTML converts arbitrary Markdown to Telegram's HTML parse mode. The
// output always parses as Telegram parses it (known tags only, balanced,
// every <, > and & escaped), shows exactly the text of the Markdown
// without its markup, and is never longer to the reader than the Markdown
// was, so a chunk that render.Split kept within 4096 units stays within
// Telegram's limit after conversion. A message sent without a parse mode
// is the text as it is.
func FuzzHTML(f *testing.F) {
	for _, s := range []string{
		"**bold** _it_ ~~gone~~ `a<b>&c` [docs](https://example.com/?a=1&b=\"2\")",
		"# Heading\n- item *one*\n* item two\n\n```go\nif a < b && c > d {}\n```",
		"<b>not a tag</b> &amp; 1 < 2 > 0 [x](javascript:alert(1))",
		"**unclosed *nested _mixed** `code\n~~~\n\n~~~",
		"\\*escaped\\* snake_case_name 2*3*4 a ** b",
		"```\n   \n```\n``` python\nx\n```",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		h := toHTML(md)
		visible, err := telegramtest.ParseHTML(h)
		if err != nil {
			t.Fatalf("Telegram would refuse the HTML: %v\nmarkdown %q\nhtml %q", err, md, h)
		}
		if want := shown(render.ParseMarkdown(md)); visible != want {
			t.Fatalf("shows %q, want %q\nmarkdown %q\nhtml %q", visible, want, md, h)
		}
		if render.Len(visible) > render.Len(md) {
			t.Fatalf("shows %d units of a %d-unit text: %q", render.Len(visible), render.Len(md), md)
		}
		text, mode := format(render.Message{Text: md})
		switch mode {
		case tgbotapi.ModeHTML:
			if text != h {
				t.Fatalf("format sent %q, not the HTML %q", text, h)
			}
		case "":
			if text != md || strings.TrimSpace(h) != "" {
				t.Fatalf("format sent %q as plain text (html %q)", text, h)
			}
		default:
			t.Fatalf("parse mode %q", mode)
		}
	})
}

// shown is what a reader sees of a parsed Markdown text: its characters
// without markup, empty code left out.
func shown(ns []render.Node) string {
	var b strings.Builder
	for _, n := range ns {
		switch n.Kind {
		case render.NodeText, render.NodeCode:
			b.WriteString(n.Text)
		case render.NodePre:
			if strings.TrimSpace(n.Text) != "" {
				b.WriteString(n.Text)
			}
		default:
			b.WriteString(shown(n.Children))
		}
	}
	return b.String()
}
