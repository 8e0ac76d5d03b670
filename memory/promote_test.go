package memory_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/memory/docs"
)

// decider is the memory tool that acts on decided proposals.
func decider(t *testing.T, m *memory.Memory) core.Decider {
	t.Helper()
	for _, vt := range m.Tools() {
		if d, ok := vt.(core.Decider); ok {
			if vt.Schema().Name != memory.ToolPropose {
				t.Fatalf("%s is a Decider", vt.Schema().Name)
			}
			return d
		}
	}
	t.Fatal("no memory tool is a core.Decider")
	return nil
}

// draft saves an agent draft of conv.
func draft(t *testing.T, s docs.Store, p, content string) docs.Document {
	return saveDoc(t, s, docs.Document{Scope: docs.Scope{Kind: docs.Conversation, Key: conv}, Path: p, Title: "Draft " + p, Content: content,
		Type: docs.IncidentLesson, Trust: docs.AgentDraft, Status: docs.Draft, Author: "agent", Source: docs.Source{ConvKey: conv, RunID: "r1", CallID: "c1"}})
}

// proposalOf is a decided proposal of d as the engine hands it to Decided.
func proposalOf(d docs.Document, status core.ApprovalStatus, reason string) core.Approval {
	args, _ := json.Marshal(map[string]string{"id": d.ID, "path": d.Path, "title": d.Title, "sha256": d.SHA256, "reason": "useful"})
	return core.Approval{ID: "appr1", ConvKey: conv, Toolset: "memory", Tool: memory.ToolPropose, Arguments: args,
		Status: status, DecidedBy: admin, Reason: reason}
}

func TestDecided(t *testing.T) {
	onStores(t, func(t *testing.T, s docs.Store) {
		m := mem(t, s)
		dec := decider(t, m)

		t.Run("approved", func(t *testing.T) {
			d := draft(t, s, "notes/approved.md", "Wait a minute before rolling back payments-api.")
			what, err := dec.Decided(t.Context(), proposalOf(d, core.ApprovalApproved, ""))
			if err != nil {
				t.Fatal(err)
			}
			if what != "promoted notes/approved.md to workspace memory by slack:UADMIN (version 2)" {
				t.Errorf("Decided = %q", what)
			}
			got, err := s.Document(t.Context(), d.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Scope != docs.WorkspaceScope || got.Trust != docs.AdminApproved || got.Status != docs.Active || got.Version != 2 ||
				got.Path != d.Path || got.Content != d.Content || got.Author != admin.ID || got.Source != d.Source {
				t.Errorf("promoted = %+v", got)
			}
			vs := history(t, s, d.ID)
			if len(vs) != 2 || vs[1].Note != "promoted by slack:UADMIN" || vs[0].Doc.Scope.Kind != docs.Conversation {
				t.Errorf("history = %+v, want the draft then the promotion", vs)
			}
			if _, err := s.DocumentAt(t.Context(), docs.WorkspaceScope, d.Path); err != nil {
				t.Errorf("DocumentAt(workspace, %s): %v", d.Path, err)
			}
		})
		t.Run("changed since proposed", func(t *testing.T) {
			d := draft(t, s, "notes/changed.md", "first")
			a := proposalOf(d, core.ApprovalApproved, "")
			d.Content = "second"
			changed, err := s.SaveDocument(t.Context(), d, docs.Save{ExpectSHA: d.SHA256, Note: "patched"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = dec.Decided(t.Context(), a)
			if !errors.Is(err, memory.ErrChanged) || !strings.Contains(err.Error(), "changed since it was proposed; propose again") {
				t.Fatalf("Decided of a changed document: %v", err)
			}
			if got, _ := s.Document(t.Context(), d.ID); got.Version != changed.Version || got.Scope.Kind != docs.Conversation || got.Trust != docs.AgentDraft {
				t.Errorf("document after a refused promotion: %+v", got)
			}
		})
		t.Run("path taken", func(t *testing.T) {
			saveDoc(t, s, docs.Document{Path: "notes/taken.md", Content: "the workspace's"})
			d := draft(t, s, "notes/taken.md", "the draft")
			_, err := dec.Decided(t.Context(), proposalOf(d, core.ApprovalApproved, ""))
			if err == nil || !strings.Contains(err.Error(), "workspace memory already has a document at notes/taken.md") {
				t.Fatalf("Decided with the path taken: %v", err)
			}
		})
		for _, tt := range []struct {
			status core.ApprovalStatus
			reason string
			want   string
		}{
			{core.ApprovalDenied, "too specific", "notes/denied.md not promoted: rejected by slack:UADMIN: too specific"},
			{core.ApprovalExpired, "", "notes/denied.md not promoted: rejected by expiry, nobody decided in time"},
		} {
			t.Run(string(tt.status), func(t *testing.T) {
				d, err := s.DocumentAt(t.Context(), docs.Scope{Kind: docs.Conversation, Key: conv}, "notes/denied.md")
				if err != nil {
					d = draft(t, s, "notes/denied.md", "no")
				}
				what, err := dec.Decided(t.Context(), proposalOf(d, tt.status, tt.reason))
				if err != nil || what != tt.want {
					t.Errorf("Decided = %q, %v; want %q", what, err, tt.want)
				}
				if got, _ := s.Document(t.Context(), d.ID); got.Version != 1 || got.Scope.Kind != docs.Conversation {
					t.Errorf("document after %s: %+v, want unchanged", tt.status, got)
				}
			})
		}
	})
}

// The CLI's promote and reject.
func TestPromoteAndReject(t *testing.T) {
	onStores(t, func(t *testing.T, s docs.Store) {
		m := mem(t, s)
		d := draft(t, s, "notes/p.md", "promote me")
		got, err := m.Promote(t.Context(), d.ID, "cli:alice")
		if err != nil {
			t.Fatal(err)
		}
		if got.Scope != docs.WorkspaceScope || got.Trust != docs.AdminApproved || got.Status != docs.Active || got.Version != 2 {
			t.Errorf("Promote = %+v", got)
		}
		if again, err := m.Promote(t.Context(), d.ID, "cli:alice"); err != nil || again.Version != 2 {
			t.Errorf("Promote again = version %d, %v; want unchanged", again.Version, err)
		}
		r := draft(t, s, "notes/r.md", "reject me")
		got, err = m.Reject(t.Context(), r.ID, "cli:bob")
		if err != nil {
			t.Fatal(err)
		}
		vs := history(t, s, r.ID)
		if got.Status != docs.Archived || len(vs) != 2 || vs[1].Note != "rejected by cli:bob" {
			t.Errorf("Reject = %+v, history %+v", got, vs)
		}
		if _, err := m.Promote(t.Context(), "nope", "cli:alice"); !errors.Is(err, docs.ErrNotFound) {
			t.Errorf("Promote of a missing id: %v, want ErrNotFound", err)
		}
	})
}

// memory_propose_promotion proposes to the admins, and the engine hands
// their decision to the tool.
func TestProposePromotion(t *testing.T) {
	onStores(t, func(t *testing.T, s docs.Store) {
		r := newRig(t, s)
		r.loadWriteTools(alice, conv)
		d := draft(t, s, "notes/lesson.md", "payments-api 502s stop a minute after a deploy.")
		ws := saveDoc(t, s, docs.Document{Path: "runbooks/x.md", Content: "x"})

		res := r.call(memory.ToolPropose, `{"path":"notes/lesson.md","reason":"every payments on-call needs this"}`)
		mustContain(t, "propose", res, false, "Proposed promoting notes/lesson.md (conversation)", "An admin decides")
		evs := r.events(core.EventMemoryPromotionProposed)
		if len(evs) != 1 || evs[0].Approval == nil {
			t.Fatalf("memory.promotion.proposed events = %+v, want one with its approval", evs)
		}
		a := *evs[0].Approval
		var args map[string]string
		if err := json.Unmarshal(a.Arguments, &args); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"id": d.ID, "path": d.Path, "title": d.Title, "sha256": d.SHA256, "reason": "every payments on-call needs this"}
		for k, v := range want {
			if args[k] != v {
				t.Errorf("proposal argument %s = %q, want %q", k, args[k], v)
			}
		}
		if got, _ := s.Document(t.Context(), d.ID); got.Version != 1 {
			t.Errorf("the document changed before the decision: %+v", got)
		}
		if _, err := r.eng.Decide(t.Context(), core.Decision{ApprovalID: a.ID, Actor: admin, Approve: true}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			got, err := s.Document(t.Context(), d.ID)
			if err == nil && got.Scope == docs.WorkspaceScope && got.Trust == docs.AdminApproved {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not promoted after the admin approved: %+v, %v", got, err)
			}
			time.Sleep(10 * time.Millisecond)
		}

		mustContain(t, "propose workspace", r.call(memory.ToolPropose, jsonArgs(map[string]string{"id": ws.ID, "reason": "r"})), true,
			"already admin-approved workspace memory")
		mustContain(t, "propose missing", r.call(memory.ToolPropose, `{"path":"notes/none.md","reason":"r"}`), true, "no memory document at")
		mustContain(t, "no reason", r.call(memory.ToolPropose, `{"path":"notes/lesson.md"}`), true, `missing required argument "reason"`)
	})
}

// Without admins nobody can decide a proposal: the model is told.
func TestProposePromotionWithoutAdmins(t *testing.T) {
	onStores(t, func(t *testing.T, s docs.Store) {
		r := newRig(t, s, func(c *core.Config) { c.Policy = core.DefaultPolicy{} })
		r.loadWriteTools(alice, conv)
		draft(t, s, "notes/lesson.md", "a lesson")
		mustContain(t, "propose", r.call(memory.ToolPropose, `{"path":"notes/lesson.md","reason":"r"}`), true,
			"cannot propose promoting notes/lesson.md (conversation)", "no admins are configured", "nothing was proposed")
		if n := len(r.events(core.EventMemoryPromotionProposed)); n != 0 {
			t.Errorf("memory.promotion.proposed events: %d, want none", n)
		}
	})
}
