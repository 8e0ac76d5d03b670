package render

import (
	"strconv"
	"strings"

	"github.com/opsgate/opsgate/core"
)

// MaxPreviewLines is how many lines of a preview's diff a chat card shows
// (docs/design.md §18); the console and `opsgate approvals show ID` show
// the whole diff.
const MaxPreviewLines = 20

// maxPreviewLineRunes bounds a diff line on a chat card, so that twenty
// of them still fit one message.
const maxPreviewLineRunes = 80

// maxWhyRunes bounds a line of a server's refusal on a chat card.
const maxWhyRunes = 400

// previewText is the preview section of a card, in the renderer's
// Markdown: the summary, a diff of at most maxLines lines (all when
// maxLines <= 0), or why there is none. Empty when the approval has no
// preview at all.
func previewText(a core.Approval, maxLines int) string {
	p := a.Preview
	if p == nil {
		return ""
	}
	var b strings.Builder
	if p.Stale != "" {
		b.WriteString("⚠️ **Stale**: " + oneLine(p.Stale, 300) + "\n")
	}
	if p.Changed != "" {
		b.WriteString("⚠️ **" + oneLine(p.Changed, 300) + "**\n")
	}
	switch p.Status {
	case core.PreviewPending:
		b.WriteString("🔎 Preview: working it out…")
	case core.PreviewNone:
		b.WriteString("🔎 no preview: " + oneLine(p.Why, 300))
	default:
		b.WriteString("🔎 **What changes**")
		if p.Summary != "" {
			b.WriteString(": " + oneLine(p.Summary, 300))
		}
		if p.Why != "" {
			// A server's refusal is read whole: it says what to fix.
			b.WriteString("\n" + fenced("text", p.Why, maxLines, maxWhyRunes))
		}
		if p.Diff != "" {
			b.WriteString("\n" + fenced("diff", p.Diff, maxLines, maxPreviewLineRunes))
		}
		if n := DiffLines(p.Diff); maxLines > 0 && n > maxLines {
			b.WriteString("\n… " + strconv.Itoa(n-maxLines) + " more lines: `opsgate approvals show " + a.ID + "`")
		}
	}
	return b.String()
}

// DiffLines counts the lines of a diff.
func DiffLines(diff string) int {
	if diff == "" {
		return 0
	}
	return strings.Count(strings.TrimRight(diff, "\n"), "\n") + 1
}

// fenced is text in a code fence of the given language, cut to maxLines
// lines, with fences inside it broken so that it cannot end the block.
func fenced(lang, text string, maxLines, maxRunes int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if maxLines > 0 && len(lines) > maxLines {
		lines = lines[:maxLines]
	}
	for i, l := range lines {
		if r := []rune(l); maxLines > 0 && len(r) > maxRunes {
			l = string(r[:maxRunes]) + "…"
		}
		lines[i] = strings.ReplaceAll(l, "```", "`\u200b``")
	}
	return "```" + lang + "\n" + strings.Join(lines, "\n") + "\n```"
}
