package memory

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/memory/docs"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestRankComponents(t *testing.T) {
	now := testNow
	ms := []docs.Match{
		{Text: 8, Doc: docs.Document{ID: "1", Path: "payments/502.md", Type: docs.Runbook, Trust: docs.AdminApproved,
			Entities:  map[string][]string{"service": {"payments-api"}, "namespace": {"payments"}, "environment": {"prod"}},
			UpdatedAt: now}},
		{Text: 4, Doc: docs.Document{ID: "2", Path: "auth/inc-2142.md", Type: docs.IncidentLesson, Trust: docs.UserAuthored,
			Entities:  map[string][]string{"incident": {"INC-2142"}, "environment": {"production"}},
			UpdatedAt: now.Add(-HalfLife)}},
		{Text: 2, Doc: docs.Document{ID: "3", Path: "notes/x.md", Type: docs.ConversationNote, Trust: docs.UserAuthored, Status: docs.Draft,
			Entities: map[string][]string{"namespace": {"payments"}}, UpdatedAt: now.Add(-2 * HalfLife)}},
	}
	got := Rank(NewQuestion("payments-api 502s in production, like inc 2142?"), ms, now)
	byID := map[string]Scored{}
	for _, s := range got {
		byID[s.Doc.ID] = s
	}
	// Six terms: payments api 502 production inc 2142.
	for _, tc := range []struct {
		id                                  string
		store, title, trust, typ, ent, recn float64
		matched, named                      []string
	}{
		{"1", 1, 3.0 / 6, 1, 1, 1, 1, []string{"payments", "api", "502"},
			[]string{"environment=prod", "namespace=payments", "service=payments-api"}},
		{"2", 0.5, 3.0 / 6, 0.85, 1, 1, 0.5, []string{"production", "inc", "2142"},
			[]string{"environment=production", "incident=INC-2142"}},
		{"3", 0.25, 1.0 / 6, 0.45, 0.6, 0.5, 0.25, []string{"payments"}, []string{"namespace=payments"}},
	} {
		s := byID[tc.id]
		c := s.Components
		text := (tc.store + tc.title) / 2
		if !near(c.TextStore, tc.store) || !near(c.Title, tc.title) || !near(c.Text, text) || !near(c.Trust, tc.trust) ||
			!near(c.Type, tc.typ) || !near(c.Entity, tc.ent) || !near(c.Recency, tc.recn) {
			t.Errorf("%s: components %+v; want store %v title %v trust %v type %v entity %v recency %v",
				tc.id, c, tc.store, tc.title, tc.trust, tc.typ, tc.ent, tc.recn)
		}
		if diff := cmp.Diff(tc.matched, c.Matched); diff != "" {
			t.Errorf("%s: matched terms (-want +got):\n%s", tc.id, diff)
		}
		if diff := cmp.Diff(tc.named, c.Entities); diff != "" {
			t.Errorf("%s: entities (-want +got):\n%s", tc.id, diff)
		}
		want := Weights.Text*text + Weights.Trust*tc.trust + Weights.Type*tc.typ + Weights.Entity*tc.ent + Weights.Recency*tc.recn
		if !near(s.Score, want) {
			t.Errorf("%s: score %v, want %v", tc.id, s.Score, want)
		}
	}
	if ids := []string{got[0].Doc.ID, got[1].Doc.ID, got[2].Doc.ID}; !slices.Equal(ids, []string{"1", "2", "3"}) {
		t.Errorf("order %v", ids)
	}
}

// A draft counts no more than an agent's draft, whoever wrote it.
func TestRankDraftTrust(t *testing.T) {
	for _, tc := range []struct {
		trust  docs.Trust
		status docs.Status
		want   float64
	}{
		{docs.AdminApproved, docs.Active, 1}, {docs.UserAuthored, docs.Active, 0.85},
		{docs.UserAuthored, docs.Draft, 0.45}, {docs.AgentDraft, docs.Draft, 0.45},
	} {
		s := Rank(NewQuestion("x1"), []docs.Match{{Text: 1, Doc: docs.Document{Trust: tc.trust, Status: tc.status}}}, testNow)
		if !near(s[0].Trust, tc.want) {
			t.Errorf("%s %s: trust %v, want %v", tc.trust, tc.status, s[0].Trust, tc.want)
		}
	}
}

func TestQuestionIntentsAndEntities(t *testing.T) {
	for _, tc := range []struct {
		text    string
		intents []Intent
	}{
		{"how do I roll back checkout-web?", []Intent{General, Incident}},
		{"what did we learn in INC-2088", []Intent{General, History}},
		{"who owns the ledger service", []Intent{General, Context}},
		{"how to verify a payments deploy", []Intent{General, Verify}},
		{"is there a change freeze at month end", []Intent{General, Convention}},
	} {
		if diff := cmp.Diff(tc.intents, NewQuestion(tc.text).Intents); diff != "" {
			t.Errorf("%q intents (-want +got):\n%s", tc.text, diff)
		}
	}
	q := NewQuestion("the rollout of checkout-api in staging; INC2088?")
	for _, tc := range []struct {
		kind, value string
		want        bool
	}{
		{"service", "checkout-api", true},
		{"workload", "rollout/checkout-api", true},
		{"service", "checkout-web", false},
		{"namespace", "checkout", true},
		{"environment", "stage", true},
		{"environment", "prod", false},
		{"incident", "INC-2088", true},
		{"incident", "INC-2089", false},
	} {
		if got := q.names(tc.kind, tc.value); got != tc.want {
			t.Errorf("names(%s=%s) = %v, want %v", tc.kind, tc.value, got, tc.want)
		}
	}
}

// Recency halves every HalfLife, and a document from the future is new.
func TestRankRecency(t *testing.T) {
	for _, tc := range []struct {
		age  time.Duration
		want float64
	}{{0, 1}, {HalfLife, 0.5}, {3 * HalfLife, 0.125}, {-time.Hour, 1}} {
		s := Rank(NewQuestion("x1"), []docs.Match{{Text: 1, Doc: docs.Document{UpdatedAt: testNow.Add(-tc.age)}}}, testNow)
		if !near(s[0].Recency, tc.want) {
			t.Errorf("age %v: recency %v, want %v", tc.age, s[0].Recency, tc.want)
		}
	}
}
