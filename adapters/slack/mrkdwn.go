package slack

import (
	"strings"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
)

// Mrkdwn converts the Markdown language models write into Slack's mrkdwn:
// **bold** and headings become *bold*, *italic* becomes _italic_, ~~x~~
// becomes ~x~, code spans and fenced blocks stay code, [label](url)
// becomes <url|label>. Everything else is text with &, < and > escaped, so
// that nothing the model (or a tool result) writes can mention people,
// ping a channel or forge a link. It never fails: markup that is not
// well-formed stays literal text.
func Mrkdwn(md string) string {
	var b strings.Builder
	writeMrkdwn(&b, render.ParseMarkdown(md))
	return b.String()
}

func writeMrkdwn(b *strings.Builder, ns []render.Node) {
	for _, n := range ns {
		switch n.Kind {
		case render.NodeText:
			b.WriteString(escape(n.Text))
		case render.NodeBold:
			wrap(b, "*", n.Children)
		case render.NodeItalic:
			wrap(b, "_", n.Children)
		case render.NodeStrike:
			wrap(b, "~", n.Children)
		case render.NodeCode:
			// A code span cannot contain a backtick in mrkdwn.
			b.WriteString("`" + escape(strings.ReplaceAll(n.Text, "`", "ˋ")) + "`")
		case render.NodePre:
			// A fence inside the code would end the block early.
			b.WriteString("```\n" + escape(strings.ReplaceAll(n.Text, "```", "`\u200b``")) + "\n```")
		case render.NodeLink:
			label := strings.TrimSpace(plain(n.Children))
			u := strings.ReplaceAll(n.URL, "|", "%7C")
			if label == "" || label == n.URL {
				b.WriteString("<" + escape(u) + ">")
				continue
			}
			b.WriteString("<" + escape(u) + "|" + escape(label) + ">")
		}
	}
}

// wrap writes children between mrkdwn markers; formatting that would be
// empty is left out, as Slack would show the bare markers.
func wrap(b *strings.Builder, marker string, children []render.Node) {
	var inner strings.Builder
	writeMrkdwn(&inner, children)
	s := inner.String()
	if strings.TrimSpace(s) == "" {
		b.WriteString(s)
		return
	}
	b.WriteString(marker + s + marker)
}

func plain(ns []render.Node) string {
	var b strings.Builder
	for _, n := range ns {
		switch n.Kind {
		case render.NodeText, render.NodeCode, render.NodePre:
			b.WriteString(n.Text)
		default:
			b.WriteString(plain(n.Children))
		}
	}
	return b.String()
}

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escape makes text literal in mrkdwn (Slack's three control characters).
func escape(s string) string { return escaper.Replace(s) }

// Slack's section text limit, in characters (we count UTF-16 units, which
// is never fewer).
const maxSection = 3000

// mrkdwnSections converts md to mrkdwn in pieces of at most maxSection
// characters. The Markdown is cut with render.Split, so a code block that
// fits a section is never cut, and a longer one is closed and reopened; a
// piece that grew past the limit by escaping is cut again, smaller.
func mrkdwnSections(md string) []string {
	var out []string
	var walk func(md string, limit int)
	walk = func(md string, limit int) {
		for _, piece := range render.Split(md, limit) {
			s := strings.Trim(Mrkdwn(piece), "\n")
			if strings.TrimSpace(s) == "" {
				continue
			}
			if render.Len(s) > maxSection && limit > 64 {
				walk(piece, limit*2/3)
				continue
			}
			out = append(out, cutSection(s))
		}
	}
	walk(md, maxSection)
	return out
}

// plainSections cuts text into pieces of at most maxSection characters
// for plain_text sections.
func plainSections(text string) []string {
	var out []string
	for _, piece := range render.Split(text, maxSection) {
		if strings.TrimSpace(piece) != "" {
			out = append(out, cutSection(piece))
		}
	}
	return out
}

// cutSection shortens s to maxSection UTF-16 units. Splitting already
// keeps pieces within the limit; this is the last guard against Slack
// refusing a whole message over one section.
func cutSection(s string) string { return core.Truncate(s, maxSection, core.UTF16) }
