package memory

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/docs"
)

// The write tools, offered after load_toolset memory: memory_remember and
// memory_patch (memory_propose_promotion is in promote.go).

type rememberArgs struct {
	Title    string            `json:"title"`
	Content  string            `json:"content"`
	Path     string            `json:"path"`
	Type     string            `json:"type"`
	Tags     []string          `json:"tags"`
	Entities map[string]values `json:"entities"`
	Scope    string            `json:"scope"`
}

func (m *Memory) rememberTool(ctx context.Context, c core.VirtualCall, a rememberArgs) core.ToolResult {
	kind := a.Scope
	if kind == "" {
		kind = string(docs.Conversation)
	}
	if kind == string(docs.Workspace) {
		return fail("agents cannot write workspace memory; propose a promotion: remember it in conversation, channel or user memory, then call memory_propose_promotion")
	}
	scope, err := scopeOf(kind, c.ConvKey, c.Person)
	if err != nil {
		return failf("invalid arguments for memory_remember: %v; nothing was stored", err)
	}
	d := docs.Document{
		Scope: scope, Title: strings.TrimSpace(a.Title), Content: a.Content, Type: docs.ConversationNote,
		Tags: cleanTags(a.Tags), Entities: entitiesOf(a.Entities), Status: docs.Draft, Trust: docs.AgentDraft,
		Source: docs.Source{ConvKey: c.ConvKey, RunID: c.RunID, CallID: c.CallID}, Author: agentAuthor,
	}
	if a.Type != "" {
		if d.Type = docs.Type(a.Type); !d.Type.Valid() {
			return failf("invalid arguments for memory_remember: type %q: want one of %s; nothing was stored", a.Type, joinValues(docs.Types))
		}
	}
	if d.Title == "" || strings.TrimSpace(d.Content) == "" {
		return fail("invalid arguments for memory_remember: title and content must not be empty; nothing was stored")
	}
	if fs := m.Scan(d.Title, d.Content); len(fs) > 0 {
		return m.blocked(c, ToolRemember, d, fs)
	}
	if a.Path != "" {
		if d.Path, err = docPath(a.Path); err != nil {
			return failf("invalid arguments for memory_remember: %v; nothing was stored", err)
		}
		cur, err := m.store.DocumentAt(ctx, scope, d.Path)
		if err == nil {
			return failf("%s already exists in %s memory (version %d, sha256 %s); read it and change it with memory_patch, or choose another path; nothing was stored",
				d.Path, scope.Kind, cur.Version, cur.SHA256)
		}
		if !errors.Is(err, docs.ErrNotFound) {
			return m.storeFailed(c, ToolRemember, err)
		}
	} else if d.Path, err = m.freePath(ctx, scope, d.Title); err != nil {
		return m.storeFailed(c, ToolRemember, err)
	}
	saved, err := m.store.SaveDocument(ctx, d, docs.Save{Note: "remembered by the agent", At: m.opt.Now()})
	if err != nil {
		return m.storeFailed(c, ToolRemember, err)
	}
	c.Emit(core.Event{Type: core.EventMemoryWriteCreated, Call: m.callInfo(c, ToolRemember), Memory: []core.MemoryRef{memRef(saved, 0)}})
	return core.ToolResult{Content: fmt.Sprintf("Remembered %s in %s memory as an unreviewed draft (version %d, sha256 %s). "+
		"It is offered as an untrusted hint from now on; memory_propose_promotion asks an admin to make it workspace knowledge.",
		saved.Path, scope.Kind, saved.Version, saved.SHA256)}
}

func (m *Memory) callInfo(c core.VirtualCall, tool string) *core.CallInfo {
	// Not the arguments: a blocked write's arguments may hold a secret.
	return &core.CallInfo{ID: c.CallID, Name: tool, Toolset: WriteToolset}
}

// blocked answers a write the scanner refused: memory.write.blocked,
// memory.safety.flagged for each secret or injection, and an error result
// naming the findings. Nothing is stored.
func (m *Memory) blocked(c core.VirtualCall, tool string, d docs.Document, fs []Finding) core.ToolResult {
	why := findings(fs)
	ref := core.MemoryRef{ID: d.ID, Path: d.Path, Type: string(d.Type), Trust: string(d.Trust)}
	m.opt.Logger.Warn("memory write blocked", "tool", tool, "conv", c.ConvKey, "run", c.RunID, "findings", why)
	c.Emit(core.Event{Type: core.EventMemoryWriteBlocked, Call: m.callInfo(c, tool), Error: why, Memory: []core.MemoryRef{ref}})
	for _, f := range fs {
		if f.Flagged() {
			c.Emit(core.Event{Type: core.EventMemorySafetyFlagged, Call: m.callInfo(c, tool), Error: f.String(), Memory: []core.MemoryRef{ref}})
		}
	}
	return failf("memory write blocked: %s; nothing was stored", why)
}

// maxPathLen bounds a document's path.
const maxPathLen = 200

// docPath checks a path the model or a person chose: a relative slash
// path without "." or ".." parts, ending in .md (added when missing).
func docPath(p string) (string, error) {
	p = strings.TrimSpace(p)
	if !strings.HasSuffix(strings.ToLower(p), ".md") {
		p += ".md"
	}
	switch {
	case p == ".md":
		return "", errors.New("path is empty")
	case len(p) > maxPathLen:
		return "", fmt.Errorf("path is longer than %d characters", maxPathLen)
	case strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || path.Clean(p) != p || strings.HasPrefix(p, "../"):
		return "", fmt.Errorf("path %q: want a relative path like notes/payments-502.md, without . or .. parts", p)
	case strings.ContainsFunc(p, unicode.IsControl):
		return "", fmt.Errorf("path %q has control characters", p)
	}
	return p, nil
}

// maxSlug bounds a slug's length, in bytes.
const maxSlug = 60

// slug is a title as a path's file name: lower-case letters and digits,
// words joined by '-', cut at a word to at most maxSlug bytes.
func slug(title string) string {
	words := strings.FieldsFunc(strings.ToLower(title), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	s := ""
	for _, w := range words {
		next := w
		if s != "" {
			next = s + "-" + w
		}
		if len(next) > maxSlug {
			if s == "" {
				s = strings.ToValidUTF8(w[:maxSlug], "")
			}
			break
		}
		s = next
	}
	if s == "" {
		return "note"
	}
	return s
}

// freePath is notes/<slug>.md, or with -2, -3, … when that path is taken
// in scope.
func (m *Memory) freePath(ctx context.Context, scope docs.Scope, title string) (string, error) {
	base := "notes/" + slug(title)
	for i := 1; ; i++ {
		p := base + ".md"
		if i > 1 {
			p = fmt.Sprintf("%s-%d.md", base, i)
		}
		_, err := m.store.DocumentAt(ctx, scope, p)
		if errors.Is(err, docs.ErrNotFound) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
	}
}

type patchArgs struct {
	ExpectedSHA string            `json:"expected_sha256"`
	Path        string            `json:"path"`
	Scope       string            `json:"scope"`
	ID          string            `json:"id"`
	Content     *string           `json:"content"`
	Title       *string           `json:"title"`
	Type        *string           `json:"type"`
	Tags        *[]string         `json:"tags"`
	Entities    map[string]values `json:"entities"`
}

func (m *Memory) patchTool(ctx context.Context, c core.VirtualCall, a patchArgs) core.ToolResult {
	found, err := m.lookup(ctx, Visible(c.ConvKey, c.Person), a.ID, a.Path, a.Scope)
	if err != nil {
		return m.lookupFailed(c, ToolPatch, err)
	}
	cur := found[0]
	if cur.Trust != docs.AgentDraft {
		why := fmt.Sprintf("%s is %s memory written by %s; only drafts can be patched by the agent; propose a change to a person", label(cur), cur.Trust, cur.Author)
		c.Emit(core.Event{Type: core.EventMemoryPolicyDenied, Call: m.callInfo(c, ToolPatch), Error: why, Memory: []core.MemoryRef{memRef(cur, 0)}})
		return fail("refused: " + why + " (tell the user what should change); nothing was changed")
	}
	if cur.Status == docs.Archived {
		return failf("%s is archived (forgotten); remember a new note instead; nothing was changed", label(cur))
	}
	if a.Content == nil && a.Title == nil && a.Type == nil && a.Tags == nil && a.Entities == nil {
		return fail("invalid arguments for memory_patch: nothing to change: give content, title, type, tags or entities")
	}
	if a.ExpectedSHA != cur.SHA256 {
		return conflict(cur)
	}
	d := cur
	if a.Content != nil {
		d.Content = *a.Content
	}
	if a.Title != nil {
		d.Title = strings.TrimSpace(*a.Title)
	}
	if a.Type != nil {
		if d.Type = docs.Type(*a.Type); !d.Type.Valid() {
			return failf("invalid arguments for memory_patch: type %q: want one of %s; nothing was changed", *a.Type, joinValues(docs.Types))
		}
	}
	if a.Tags != nil {
		d.Tags = cleanTags(*a.Tags)
	}
	if a.Entities != nil {
		d.Entities = entitiesOf(a.Entities)
	}
	if d.Title == "" || strings.TrimSpace(d.Content) == "" {
		return fail("invalid arguments for memory_patch: title and content must not be empty; nothing was changed")
	}
	if fs := m.Scan(d.Title, d.Content); len(fs) > 0 {
		return m.blocked(c, ToolPatch, d, fs)
	}
	d.Author, d.Source = agentAuthor, docs.Source{ConvKey: c.ConvKey, RunID: c.RunID, CallID: c.CallID}
	saved, err := m.store.SaveDocument(ctx, d, docs.Save{ExpectSHA: a.ExpectedSHA, Note: "patched by the agent", At: m.opt.Now()})
	var ce *docs.ConflictError
	switch {
	case errors.As(err, &ce):
		return conflict(ce.Current)
	case err != nil:
		return m.storeFailed(c, ToolPatch, err)
	case saved.Version == cur.Version:
		return core.ToolResult{Content: fmt.Sprintf("Nothing changed: %s already reads like that (version %d, sha256 %s).", label(saved), saved.Version, saved.SHA256)}
	}
	c.Emit(core.Event{Type: core.EventMemoryWriteCreated, Call: m.callInfo(c, ToolPatch), Memory: []core.MemoryRef{memRef(saved, 0)}})
	return core.ToolResult{Content: fmt.Sprintf("Patched %s: now version %d, sha256 %s.", label(saved), saved.Version, saved.SHA256)}
}

// conflict is the result of a patch whose expected sha256 is not cur's.
func conflict(cur docs.Document) core.ToolResult {
	return failf("conflict: %s changed since you read it: its current sha256 is %s (version %d); read it again and patch that; nothing was changed",
		label(cur), cur.SHA256, cur.Version)
}
