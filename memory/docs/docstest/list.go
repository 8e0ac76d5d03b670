package docstest

import (
	"testing"

	"github.com/opsgate/opsgate/memory/docs"
)

// testDocumentsFilter lists documents by each Filter field, in order of
// scope, then path.
func testDocumentsFilter(t *testing.T, s docs.Store) {
	type row struct {
		scope  docs.Scope
		path   string
		status docs.Status
		trust  docs.Trust
		typ    docs.Type
	}
	// Saved out of order, so that the order listed is the store's.
	rows := []row{
		{ws, "runbooks/z.md", docs.Active, docs.AdminApproved, docs.Runbook},
		{alice, "prefs.md", docs.Active, docs.UserAuthored, docs.UserPreference},
		{ws, "runbooks/a.md", docs.Archived, docs.AdminApproved, docs.Runbook},
		{opsLong, "b.md", docs.Draft, docs.AgentDraft, docs.IncidentLesson},
		{ops, "b.md", docs.Active, docs.UserAuthored, docs.WorkspaceConvention},
		{ops, "a.md", docs.Draft, docs.AgentDraft, docs.IncidentLesson},
		{conv, "note.md", docs.Draft, docs.AgentDraft, docs.ConversationNote},
		{ws, "context/payments.md", docs.Active, docs.SystemSeeded, docs.ServiceContext},
		{bob, "prefs.md", docs.Active, docs.UserAuthored, docs.UserPreference},
	}
	for _, r := range rows {
		d := doc(r.scope, r.path, r.path)
		d.Status, d.Trust, d.Type = r.status, r.trust, r.typ
		save(t, s, d, docs.Save{At: at(0)})
	}
	// Byte order of scope kind, scope key, path.
	all := []string{
		"channel:slack:T1:C1 a.md",
		"channel:slack:T1:C1 b.md",
		"channel:slack:T1:C12 b.md",
		"conversation:slack:T1:C1:1700000000.000100 note.md",
		"user:alice prefs.md",
		"user:bob prefs.md",
		"workspace context/payments.md",
		"workspace runbooks/a.md",
		"workspace runbooks/z.md",
	}
	tests := []struct {
		name string
		f    docs.Filter
		want []string
	}{
		{"all", docs.Filter{}, all},
		{"limit", docs.Filter{Limit: 4}, all[:4]},
		{"workspace", docs.Filter{Scopes: []docs.Scope{ws}}, all[6:]},
		{"one channel", docs.Filter{Scopes: []docs.Scope{ops}}, all[:2]},
		{"channel key prefix", docs.Filter{Scopes: []docs.Scope{{Kind: docs.Channel, Key: "slack:T1:C"}}}, nil},
		{"several scopes", docs.Filter{Scopes: []docs.Scope{alice, opsLong, ws}},
			[]string{all[2], all[4], all[6], all[7], all[8]}},
		{"active", docs.Filter{Statuses: []docs.Status{docs.Active}}, []string{all[1], all[4], all[5], all[6], all[8]}},
		{"draft or archived", docs.Filter{Statuses: []docs.Status{docs.Draft, docs.Archived}}, []string{all[0], all[2], all[3], all[7]}},
		{"trust", docs.Filter{Trust: docs.AgentDraft}, []string{all[0], all[2], all[3]}},
		{"type", docs.Filter{Type: docs.UserPreference}, []string{all[4], all[5]}},
		{"all fields", docs.Filter{Scopes: []docs.Scope{ws, ops}, Statuses: []docs.Status{docs.Active},
			Trust: docs.AdminApproved, Type: docs.Runbook, Limit: 5}, []string{all[8]}},
		{"nothing", docs.Filter{Type: docs.VerificationChecklist}, nil},
	}
	for _, tt := range tests {
		got, err := s.Documents(t.Context(), tt.f)
		if err != nil {
			t.Errorf("%s: Documents(%+v): %v", tt.name, tt.f, err)
			continue
		}
		diff(t, tt.name+": Documents", tt.want, paths(got))
	}
	// What is listed is the whole document.
	got, err := s.Documents(t.Context(), docs.Filter{Scopes: []docs.Scope{bob}})
	if err != nil || len(got) != 1 {
		t.Fatalf("Documents(bob) = %d documents, %v; want 1", len(got), err)
	}
	diff(t, "Documents(bob)[0]", get(t, s, got[0].ID), got[0])
}
