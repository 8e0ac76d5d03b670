package telegram

import (
	"html"
	"strings"

	"github.com/opsgate/opsgate/adapters/render"
)

// toHTML converts a model's Markdown to Telegram's HTML parse mode. Text is
// escaped and tags come from a parsed tree, so the output is always well
// formed, whatever the model wrote; links are limited to safe schemes.
func toHTML(md string) string {
	var b strings.Builder
	writeHTML(&b, render.ParseMarkdown(md))
	return b.String()
}

func writeHTML(b *strings.Builder, ns []render.Node) {
	for _, n := range ns {
		switch n.Kind {
		case render.NodeText:
			b.WriteString(escape(n.Text))
		case render.NodeBold:
			wrap(b, "b", n.Children)
		case render.NodeItalic:
			wrap(b, "i", n.Children)
		case render.NodeStrike:
			wrap(b, "s", n.Children)
		case render.NodeCode:
			if n.Text != "" {
				b.WriteString("<code>" + escape(n.Text) + "</code>")
			}
		case render.NodePre:
			if strings.TrimSpace(n.Text) == "" {
				continue
			}
			b.WriteString("<pre>")
			if lang := language(n.Lang); lang != "" {
				b.WriteString(`<code class="language-` + lang + `">` + escape(n.Text) + "</code>")
			} else {
				b.WriteString(escape(n.Text))
			}
			b.WriteString("</pre>")
		case render.NodeLink:
			b.WriteString(`<a href="` + html.EscapeString(n.URL) + `">`)
			writeHTML(b, n.Children)
			b.WriteString("</a>")
		}
	}
}

func wrap(b *strings.Builder, tag string, children []render.Node) {
	b.WriteString("<" + tag + ">")
	writeHTML(b, children)
	b.WriteString("</" + tag + ">")
}

// escape escapes exactly what Telegram requires: <, > and &.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// language keeps a code block's language only if it is a plain name.
func language(l string) string {
	if len(l) > 32 {
		return ""
	}
	for _, r := range l {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("+-_#.", r)) {
			return ""
		}
	}
	return l
}
