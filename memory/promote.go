package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/docs"
)

// promoteTool is memory_propose_promotion. It proposes (core.Proposal) and
// acts on the admins' decision (core.Decider).
type promoteTool struct{ memTool[proposeArgs] }

var (
	_ core.VirtualTool = (*promoteTool)(nil)
	_ core.Decider     = (*promoteTool)(nil)
)

type proposeArgs struct {
	Reason string `json:"reason"`
	Path   string `json:"path"`
	Scope  string `json:"scope"`
	ID     string `json:"id"`
}

// proposal is what an admin decides: the document as it was proposed
// (its sha256 binds the decision to that content) and why.
type proposal struct {
	ID     string `json:"id"`
	Path   string `json:"path"`
	Title  string `json:"title"`
	SHA256 string `json:"sha256"`
	Reason string `json:"reason"`
}

// ErrChanged is a promotion of a document whose content is no longer
// what was proposed: its sha256 does not match, so its kind is
// core.KindHashMismatch.
var ErrChanged = core.NewKindError(core.KindHashMismatch, "it changed since it was proposed; propose again")

func (t *promoteTool) Call(ctx context.Context, c core.VirtualCall) core.ToolResult {
	var a proposeArgs
	if err := decodeArgs(c.Arguments, t.params, &a); err != nil {
		return failf("invalid arguments for %s: %v; nothing was proposed. Fix the arguments and call it again.", t.name, err)
	}
	return t.m.proposeTool(ctx, c, a)
}

func (m *Memory) proposeTool(ctx context.Context, c core.VirtualCall, a proposeArgs) core.ToolResult {
	if strings.TrimSpace(a.Reason) == "" {
		return fail("invalid arguments for memory_propose_promotion: reason is empty; nothing was proposed")
	}
	found, err := m.lookup(ctx, Visible(c.ConvKey, c.Person), a.ID, a.Path, a.Scope)
	if err != nil {
		return m.lookupFailed(c, ToolPropose, err)
	}
	d := found[0]
	switch {
	case promoted(d):
		return failf("%s is already admin-approved workspace memory; nothing to propose", label(d))
	case d.Status == docs.Archived:
		return failf("%s is archived (forgotten); nothing was proposed", label(d))
	}
	args, err := json.Marshal(proposal{ID: d.ID, Path: d.Path, Title: d.Title, SHA256: d.SHA256, Reason: strings.TrimSpace(a.Reason)})
	if err != nil {
		return m.storeFailed(c, ToolPropose, err)
	}
	appr, err := c.Propose(ctx, core.Proposal{Arguments: args, Event: core.EventMemoryPromotionProposed})
	switch {
	case errors.Is(err, core.ErrNoAdmins):
		return failf("cannot propose promoting %s: %v. Tell the user; nothing was proposed.", label(d), err)
	case err != nil:
		return m.storeFailed(c, ToolPropose, err)
	}
	return core.ToolResult{Content: fmt.Sprintf("Proposed promoting %s (sha256 %s) to workspace memory. An admin decides (request %s); "+
		"nothing changes until then, and a change to the document before the decision voids the proposal.", label(d), d.SHA256, appr.ID)}
}

// promoted reports whether d is already what a promotion makes it.
func promoted(d docs.Document) bool {
	return d.Scope == docs.WorkspaceScope && d.Trust == docs.AdminApproved && d.Status == docs.Active
}

// Decided acts on the admins' decision about a proposal (core.Decider):
// approved, the document is promoted unless its content changed since it
// was proposed; denied or expired, nothing changes.
func (t *promoteTool) Decided(ctx context.Context, a core.Approval) (string, error) {
	var p proposal
	if err := json.Unmarshal(a.Arguments, &p); err != nil || p.ID == "" {
		return "", fmt.Errorf("memory: promotion %s: unreadable proposal: %s", a.ID, a.Arguments)
	}
	by := a.DecidedBy.ID
	switch a.Status {
	case core.ApprovalApproved:
		d, err := t.m.promote(ctx, p.ID, p.SHA256, by)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("promoted %s to workspace memory by %s (version %d)", d.Path, by, d.Version), nil
	case core.ApprovalDenied:
		s := fmt.Sprintf("%s not promoted: rejected by %s", p.Path, by)
		if a.Reason != "" {
			s += ": " + a.Reason
		}
		return s, nil
	case core.ApprovalExpired:
		return fmt.Sprintf("%s not promoted: rejected by expiry, nobody decided in time", p.Path), nil
	}
	return fmt.Sprintf("%s not promoted: the proposal was %s", p.Path, a.Status), nil
}

// Promote makes a document admin-approved workspace memory (`opsgate
// memory promote ID`); by is the promoter's identity ("cli:alice").
func (m *Memory) Promote(ctx context.Context, id, by string) (docs.Document, error) {
	return m.promote(ctx, id, "", by)
}

// promote promotes document id, whose content must still be expectSHA
// (unless empty), as a new version noted "promoted by <by>".
func (m *Memory) promote(ctx context.Context, id, expectSHA, by string) (docs.Document, error) {
	d, err := m.store.Document(ctx, id)
	if err != nil {
		return docs.Document{}, fmt.Errorf("memory: promote %s: %w", id, err)
	}
	if expectSHA != "" && d.SHA256 != expectSHA {
		return docs.Document{}, fmt.Errorf("memory: promote %s: %w (sha256 was %.12s…, is %.12s…)", d.Path, ErrChanged, expectSHA, d.SHA256)
	}
	if promoted(d) {
		return d, nil
	}
	from := d.Scope
	d.Scope, d.Trust, d.Status, d.Author = docs.WorkspaceScope, docs.AdminApproved, docs.Active, by
	saved, err := m.store.SaveDocument(ctx, d, docs.Save{ExpectSHA: d.SHA256, Note: "promoted by " + by, At: m.opt.Now()})
	switch {
	case errors.Is(err, docs.ErrPathTaken):
		return docs.Document{}, fmt.Errorf("memory: promote %s from %s: workspace memory already has a document at %s; move one of them first", d.Path, from, d.Path)
	case errors.Is(err, docs.ErrConflict):
		return docs.Document{}, fmt.Errorf("memory: promote %s: %w", d.Path, ErrChanged)
	case err != nil:
		return docs.Document{}, fmt.Errorf("memory: promote %s: %w", d.Path, err)
	}
	return saved, nil
}

// Reject archives a document, noted "rejected by <by>" (`opsgate memory
// reject ID`): it stays in the history and is never retrieved again.
func (m *Memory) Reject(ctx context.Context, id, by string) (docs.Document, error) {
	return m.archive(ctx, id, "rejected by "+by, by)
}

// archive makes document id archived as a new version with note.
func (m *Memory) archive(ctx context.Context, id, note, by string) (docs.Document, error) {
	d, err := m.store.Document(ctx, id)
	if err != nil {
		return docs.Document{}, fmt.Errorf("memory: archive %s: %w", id, err)
	}
	if d.Status == docs.Archived {
		return d, nil
	}
	d.Status, d.Author = docs.Archived, by
	saved, err := m.store.SaveDocument(ctx, d, docs.Save{ExpectSHA: d.SHA256, Note: note, At: m.opt.Now()})
	if err != nil {
		return docs.Document{}, fmt.Errorf("memory: archive %s: %w", d.Path, err)
	}
	return saved, nil
}
