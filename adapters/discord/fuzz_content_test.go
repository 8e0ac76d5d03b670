package discord

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
	"github.com/opsgate/opsgate/adapters/render"
)

// FuzzContent renders arbitrary text as a Discord message. The content is
// never blank (Discord refuses it) and never over 2000 characters; the
// Markdown Discord renders itself goes out unchanged when it fits, and
// plain text is escaped so that Discord shows it as it is (unescaping the
// content gives the text back). A button keeps its data and at most 80
// characters of its label.
func FuzzContent(f *testing.F) {
	for _, s := range []string{
		"**bold** `code` ||spoiler|| > quote\n# head\n[x](https://example.com) @everyone <@123>",
		"\\*already escaped\\* ~~x~~ __u__",
		"   \n\t",
		strings.Repeat("é😀", 700),
	} {
		f.Add(s, false, "✅ Approve", "a:0123456789abcdef0123456789abcdef")
		f.Add(s, true, strings.Repeat("x", 90), "s:run")
	}
	f.Fuzz(func(t *testing.T, text string, plain bool, label, data string) {
		c := content(render.Message{Text: text, Plain: plain})
		if strings.TrimSpace(c) == "" || render.Len(c) > maxContent {
			t.Fatalf("content %q (%d units) for %q", c, render.Len(c), text)
		}
		fits := render.Len(text) <= maxContent && strings.TrimSpace(text) != ""
		switch {
		case !plain && fits && c != text:
			t.Fatalf("Markdown %q went out as %q", text, c)
		case plain && fits && render.Len(escapeMarkdown(text)) <= maxContent && unescapeMarkdown(c) != text:
			t.Fatalf("plain %q went out as %q, which shows %q", text, c, unescapeMarkdown(c))
		}
		comps := components([]render.Button{{Label: label, Data: data}})
		btn := comps[0].(discordgo.ActionsRow).Components[0].(discordgo.Button)
		if btn.CustomID != data || utf8.RuneCountInString(btn.Label) > maxButtonLabel ||
			btn.Label != label && !strings.HasPrefix(string([]rune(label)), btn.Label) { // a cut label: invalid bytes as U+FFFD
			t.Fatalf("button %+v from label %q data %q", btn, label, data)
		}
	})
}

// unescapeMarkdown is what Discord shows of escaped text: a backslash
// makes the next character literal.
func unescapeMarkdown(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
