package memory

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/opsgate/opsgate/memory/docs"
)

// Weighting is how much each ranking component counts. Every component is
// in 0..1, so a score is at most the sum of the weights.
type Weighting struct {
	Text    float64 // how well the words match: the store's relevance and the title's
	Type    float64 // TypeBoosts for what the question is after
	Trust   float64 // docs.Trust.Weight
	Entity  float64 // the document's entities named in the question
	Recency float64 // 30-day half-life on UpdatedAt
}

// Weights is the one ranking table (docs/design.md §14): a candidate's score is
// the weighted sum of its components, tuned on the labelled queries of
// testdata/queries.yaml (TestRetrievalQuality).
//
//	component  weight  value in 0..1
//	Text       0.50    ½ store relevance (FTS5 bm25 / ts_rank_cd) ÷ the best of this search
//	                   + ½ share of the question's terms in the title, tags, entities and path
//	Type       0.20    TypeBoosts: runbooks first for incident-like questions, lessons
//	                   for "what happened", checklists for "verify", …
//	Trust      0.15    admin_approved 1.0, system_seeded 0.95, user_authored 0.85,
//	                   agent_draft (and any draft) 0.45
//	Entity     0.10    1 when a service, workload or incident of the document is named;
//	                   else 0.5 for its namespace, 0.25 for its environment alone
//	Recency    0.05    0.5^(age / 30 days), age since the last update
//
// Text dominates: the rest reorders documents that match about as well.
// The title share matters because titles name the service and symptom in
// the words people use, where the store's relevance also rewards long
// documents that mention everything once. Trust alone (0.15 × 0.55
// between admin_approved and agent_draft) puts an approved document above
// a draft with the same text.
var Weights = Weighting{Text: 0.50, Type: 0.20, Trust: 0.15, Entity: 0.10, Recency: 0.05}

// titleShare is the title's part of the Text component.
const titleShare = 0.5

// HalfLife is the age at which a document's recency is 0.5.
const HalfLife = 30 * 24 * time.Hour

// Intent is what a question seems to be after, as far as document types
// go.
type Intent string

// Intents. General is every question's; the others are recognised by
// their words (intentWords).
const (
	General    Intent = "general"
	Incident   Intent = "incident"   // something is broken: errors, crashes, alerts, rollbacks
	History    Intent = "history"    // what happened before: incidents, postmortems, lessons
	Verify     Intent = "verify"     // how to check that a fix or change worked
	Tooling    Intent = "tooling"    // how to use a tool or command
	Convention Intent = "convention" // how the team does things: freezes, approvals, naming
	Context    Intent = "context"    // what a service is, who owns it, what it depends on
	Preference Intent = "preference" // the person's own preferences
)

// TypeBoosts is the Type component of a document for each intent; a
// question with several intents gives each document its best value.
var TypeBoosts = map[Intent]map[docs.Type]float64{
	General: {docs.Runbook: 0.6, docs.IncidentLesson: 0.5, docs.VerificationChecklist: 0.5, docs.ServiceContext: 0.6,
		docs.WorkspaceConvention: 0.6, docs.ToolUsageLesson: 0.5, docs.UserPreference: 0.5, docs.ConversationNote: 0.4, docs.Postmortem: 0.5},
	Incident: {docs.Runbook: 1.0, docs.IncidentLesson: 0.8, docs.Postmortem: 0.8, docs.VerificationChecklist: 0.7, docs.ServiceContext: 0.5,
		docs.ToolUsageLesson: 0.5},
	History:    {docs.IncidentLesson: 1.0, docs.Postmortem: 1.0, docs.Runbook: 0.7, docs.ConversationNote: 0.6},
	Verify:     {docs.VerificationChecklist: 1.0, docs.Runbook: 0.8},
	Tooling:    {docs.ToolUsageLesson: 1.0, docs.Runbook: 0.7},
	Convention: {docs.WorkspaceConvention: 1.0, docs.UserPreference: 0.7},
	Context:    {docs.ServiceContext: 1.0, docs.Runbook: 0.6},
	Preference: {docs.UserPreference: 1.0, docs.WorkspaceConvention: 0.7},
}

// intentWords are the words that show an intent.
var intentWords = sync.OnceValue(func() map[Intent]map[string]bool {
	return map[Intent]map[string]bool{
		Incident: wordSet(`error errors erroring 5xx 4xx 500 502 503 504 429 401 403 404 down outage failing fails failed
		failure failures crash crashes crashing crashloop crashloopbackoff oom oomkilled killed evicted evictions alert
		alerts alerting firing fired paged page latency slow slowness timeout timeouts timing spike spiking broken
		degraded incident pending restart restarts restarting lag lagging backlog stuck full pressure unavailable
		rollback roll revert undo exhausted expired expiring expiry red hung hanging dropping dropped rejected
		refused reset resets unhealthy notready imagepullbackoff throttled throttling leak leaking`),
		History: wordSet(`incident incidents postmortem postmortems lesson lessons learned before previously happened
		history last inc`),
		Verify: wordSet(`verify verified verifying verification checklist confirm confirmed validate validation
		smoke`),
		Tooling: wordSet(`command commands syntax cli flag flags usage`),
		Convention: wordSet(`convention conventions policy policies freeze allowed rule rules approval approver naming
		process etiquette`),
		Context:    wordSet(`owns owner owners ownership architecture depends dependency dependencies overview responsible`),
		Preference: wordSet(`prefer preference preferences favourite favorite`),
	}
})

// Components are the parts of a candidate's score, each before weighting
// (what `memory search --explain` shows).
type Components struct {
	Text float64 // (1-titleShare)·TextStore + titleShare·Title
	// TextRaw is the store's relevance, TextStore that over the best of
	// the search.
	TextRaw, TextStore float64
	// Title is the share of the question's terms found in the title, tags,
	// entity values and path; Matched are those terms.
	Title   float64
	Matched []string
	Type    float64
	Trust   float64
	Entity  float64
	// Entities are the document's entities the question names, as
	// kind=value.
	Entities []string
	Recency  float64
	AgeDays  float64 // since UpdatedAt, for Recency
	// Coverage is the absolute relevance the floor memory.min_score is
	// compared with (see Coverage); it is not part of Score.
	Coverage float64
}

// Scored is a ranked search result.
type Scored struct {
	Doc   docs.Document
	Score float64 // Weights applied to Components
	Components
}

// entityWeights is the Entity component of a named entity, by kind: naming
// a service, workload or incident singles a document out; a namespace
// narrows; an environment barely does (most documents are about prod).
var entityWeights = map[string]float64{
	"service": 1, "workload": 1, "incident": 1,
	"namespace": 0.5, "environment": 0.25,
}

// entityWeight is entityWeights with 0.5 for other kinds.
func entityWeight(kind string) float64 {
	if w, ok := entityWeights[kind]; ok {
		return w
	}
	return 0.5
}

// entityMatch returns the Entity component of d for q and which of its
// entities q names.
func (q Question) entityMatch(d docs.Document) (float64, []string) {
	kinds := make([]string, 0, len(d.Entities))
	for k := range d.Entities {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	best := 0.0
	var named []string
	for _, kind := range kinds {
		for _, v := range d.Entities[kind] {
			if q.names(kind, v) {
				named = append(named, kind+"="+v)
				best = max(best, entityWeight(kind))
			}
		}
	}
	return best, named
}

// typeBoost is the Type component of a document of type t.
func (q Question) typeBoost(t docs.Type) float64 {
	b := 0.0
	for _, in := range q.Intents {
		b = max(b, TypeBoosts[in][t])
	}
	return b
}

// Rank scores the store's matches for q at time now and returns them best
// first (ties: better store relevance, then path, then id). It is pure:
// the same matches, question and time give the same result.
func Rank(q Question, ms []docs.Match, now time.Time) []Scored {
	best := 0.0
	for _, m := range ms {
		best = max(best, m.Text)
	}
	stems := make([]string, len(q.Terms))
	for i, t := range q.Terms {
		stems[i] = stem(t)
	}
	out := make([]Scored, len(ms))
	for i, m := range ms {
		c := Components{TextRaw: m.Text, Type: q.typeBoost(m.Doc.Type), Trust: trust(m.Doc)}
		if best > 0 {
			c.TextStore = m.Text / best
		}
		if len(stems) > 0 {
			meta := metaStems(m.Doc)
			for j, s := range stems {
				if meta[s] {
					c.Matched = append(c.Matched, q.Terms[j])
				}
			}
			c.Title = float64(len(c.Matched)) / float64(len(stems))
		}
		c.Text = (1-titleShare)*c.TextStore + titleShare*c.Title
		c.Entity, c.Entities = q.entityMatch(m.Doc)
		if !m.Doc.UpdatedAt.IsZero() {
			age := max(0, now.Sub(m.Doc.UpdatedAt))
			c.AgeDays = age.Hours() / 24
			c.Recency = math.Pow(0.5, float64(age)/float64(HalfLife))
		}
		out[i] = Scored{Doc: m.Doc, Score: Weights.score(c), Components: c}
	}
	slices.SortStableFunc(out, func(a, b Scored) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(b.TextRaw, a.TextRaw),
			cmp.Compare(a.Doc.Path, b.Doc.Path), cmp.Compare(a.Doc.ID, b.Doc.ID))
	})
	return out
}

// trust is the Trust component: the trust level's weight, and no more
// than an agent's draft for a draft (not yet approved, whoever wrote it).
func trust(d docs.Document) float64 {
	w := d.Trust.Weight()
	if d.Status == docs.Draft {
		w = min(w, docs.AgentDraft.Weight())
	}
	return w
}

// metaStems are the stems of the words that name a document: its title,
// tags, entity values and path.
func metaStems(d docs.Document) map[string]bool {
	meta := map[string]bool{}
	add := func(s string) {
		for _, w := range words(s) {
			meta[stem(w)] = true
		}
	}
	add(d.Title)
	add(d.Path)
	for _, t := range d.Tags {
		add(t)
	}
	for _, vs := range d.Entities {
		for _, v := range vs {
			add(v)
		}
	}
	return meta
}

// score weighs c.
func (w Weighting) score(c Components) float64 {
	return w.Text*c.Text + w.Trust*c.Trust + w.Type*c.Type + w.Entity*c.Entity + w.Recency*c.Recency
}
