package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/docs"
)

var _ core.Commands = (*Memory)(nil)

// commandResults is how many documents /memory lists.
const commandResults = 5

// memoryUsage is /memory's help.
const memoryUsage = "Memory commands:\n" +
	"• `/memory QUERY`: search what I remember (runbooks, lessons, notes)\n" +
	"• `/remember TEXT`: keep TEXT as a note of this channel\n" +
	"• `/forget PATH`: archive a note (your own, or any as an admin)"

// Command answers /remember, /memory and /forget (core.Commands), also in
// Telegram's "/cmd@bot" form. Other text is not a command: ("", false).
func (m *Memory) Command(ctx context.Context, c core.CommandCall) (string, bool) {
	text := strings.TrimSpace(c.Text)
	if !strings.HasPrefix(text, "/") {
		return "", false
	}
	name, arg, _ := strings.Cut(text, " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, arg = name[:i], text[i+1:]
	}
	name, _, _ = strings.Cut(strings.ToLower(name), "@")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/remember":
		return m.remember(ctx, c, arg), true
	case "/memory":
		return m.searchCommand(ctx, c, arg), true
	case "/forget":
		return m.forget(ctx, c, arg), true
	}
	return "", false
}

// remember is /remember TEXT: a user_authored note of the conversation's
// channel, by the person who wrote it.
func (m *Memory) remember(ctx context.Context, c core.CommandCall, text string) string {
	if text == "" {
		return "Usage: `/remember TEXT`: I keep TEXT as a note of this channel, and use it in later answers here."
	}
	scope, err := scopeOf(string(docs.Channel), c.ConvKey, c.Person)
	if err != nil {
		return "⚠️ Not remembered: " + err.Error() + "."
	}
	d := docs.Document{
		Scope: scope, Title: noteTitleOf(text), Content: text, Type: docs.ConversationNote,
		Status: docs.Active, Trust: docs.UserAuthored, Author: c.User.ID, Source: docs.Source{ConvKey: c.ConvKey},
	}
	fs := m.Scan(d.Title, d.Content)
	// The engine redacts what a person types before storing it
	// (core.Config.RedactInput): a marker in a note is a secret typed.
	for _, kind := range markerCounts(text).order {
		fs = append(fs, Finding{FindingSecret, kind})
	}
	if len(fs) > 0 {
		m.opt.Logger.Warn("memory: /remember blocked", "conv", c.ConvKey, "user", c.User.ID, "findings", findings(fs))
		return "⛔ Not remembered: " + findings(fs) + ". Nothing was stored."
	}
	if d.Path, err = m.freePath(ctx, scope, d.Title); err != nil {
		return m.commandFailed(c, "/remember", err)
	}
	saved, err := m.store.SaveDocument(ctx, d, docs.Save{Note: "remembered by " + c.User.ID, At: m.opt.Now()})
	if err != nil {
		return m.commandFailed(c, "/remember", err)
	}
	return fmt.Sprintf("📝 Remembered as %s (channel memory). `/forget %s` undoes it.", saved.Path, saved.Path)
}

// maxNoteTitle is how long a /remember note's title may be, in
// characters.
const maxNoteTitle = 72

// noteTitleOf is a note's title: its first line, cut at a word to at most
// maxNoteTitle characters, "…" marking the cut.
func noteTitleOf(text string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	l = oneLine(l)
	r := []rune(l)
	if len(r) <= maxNoteTitle {
		return l
	}
	cut := string(r[:maxNoteTitle])
	if i := strings.LastIndexByte(cut, ' '); i > maxNoteTitle/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:.-") + "…"
}

func (m *Memory) commandFailed(c core.CommandCall, cmd string, err error) string {
	m.opt.Logger.Error("memory command: store failed", "command", cmd, "conv", c.ConvKey, "err", err)
	return "⚠️ " + cmd + " failed: the memory store is unavailable. Nothing was changed; try again later."
}

// searchCommand is /memory QUERY: the best few visible documents.
func (m *Memory) searchCommand(ctx context.Context, c core.CommandCall, q string) string {
	if q == "" {
		return memoryUsage
	}
	res, err := m.Search(ctx, SearchRequest{Text: q, Scopes: Visible(c.ConvKey, c.Person), Limit: commandResults, IncludeDrafts: true})
	if err != nil {
		return m.commandFailed(c, "/memory", err)
	}
	if len(res) == 0 {
		return fmt.Sprintf("🔎 Nothing in memory matches “%s”.", oneLine(q))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "🔎 Memory for “%s”:\n", oneLine(q))
	for i, r := range res {
		d := r.Doc
		fmt.Fprintf(&b, "%d. `%s`: %s (%s, %s, %s)\n", i+1, d.Path, oneLine(d.Title), d.Type, d.Scope.Kind, d.Trust)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// forget is /forget PATH: the visible document at PATH is archived, when
// the person wrote it or is an admin.
func (m *Memory) forget(ctx context.Context, c core.CommandCall, p string) string {
	if p == "" {
		return "Usage: `/forget PATH`, e.g. `/forget notes/payments-502.md` (`/memory QUERY` finds paths)."
	}
	p = strings.Trim(p, "`")
	found, err := m.lookup(ctx, Visible(c.ConvKey, c.Person), "", p, "")
	var nd errNoDoc
	switch {
	case errors.As(err, &nd):
		return fmt.Sprintf("🤷 There is no %s in the memory this conversation sees.", p)
	case err != nil:
		return m.commandFailed(c, "/forget", err)
	}
	var d docs.Document
	mayForget := false
	for _, f := range found {
		if f.Status == docs.Archived {
			continue
		}
		if mine := f.Author != "" && (f.Author == c.User.ID || f.Author == c.Person); mine || c.Admin {
			d, mayForget = f, true
			break
		}
		if d.ID == "" {
			d = f
		}
	}
	switch {
	case d.ID == "":
		return fmt.Sprintf("%s is already forgotten.", p)
	case !mayForget:
		return fmt.Sprintf("🚫 %s (%s memory) was written by %s: only its author or an admin can forget it.", d.Path, d.Scope.Kind, d.Author)
	}
	saved, err := m.archive(ctx, d.ID, "forgotten by "+c.User.ID, c.User.ID)
	if err != nil {
		if errors.Is(err, docs.ErrConflict) {
			return fmt.Sprintf("⚠️ %s changed just now; look at it again and retry.", d.Path)
		}
		return m.commandFailed(c, "/forget", err)
	}
	return fmt.Sprintf("🗑️ Forgot %s (%s memory): it is archived and no longer used in answers.", saved.Path, saved.Scope.Kind)
}
