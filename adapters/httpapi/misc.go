package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/docs"
)

// audit answers GET /api/v1/audit[?q=&conversation=&run=&approval=&since=&limit=]:
// the entries matching, oldest first, the last limit of them (default
// 1000). since is a duration back from now (24h) or an RFC 3339 time. q
// is free text: an entry matches when q is a case-insensitive substring
// of the entry as JSON (its kind, people, tool, ids, detail…); it is
// applied before limit, so the last limit matches are returned. It
// searches the entries as the response shows them, redacted, so that
// guessing at q cannot confirm a secret the response hides.
func (a *API) audit(w http.ResponseWriter, r *http.Request, _ core.Actor) {
	q := r.URL.Query()
	f := core.AuditFilter{ConvKey: q.Get("conversation"), RunID: q.Get("run"), ApprovalID: q.Get("approval")}
	if s := q.Get("since"); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			f.Since = time.Now().Add(-d)
		} else if t, err := time.Parse(time.RFC3339, s); err == nil {
			f.Since = t
		} else {
			writeKind(w, core.KindInvalid, "since must be a duration (24h) or an RFC 3339 time")
			return
		}
	}
	limit, ok := intParam(w, r, "limit", 1000)
	if !ok {
		return
	}
	es, err := a.o.Store.Audit(r.Context(), f)
	if err == nil {
		es, err = visible(r.Context(), viewerOf(r), es, func(e core.AuditEntry) string { return e.ConvKey })
	}
	if err != nil {
		a.fail(w, "audit", err)
		return
	}
	if text := strings.TrimSpace(q.Get("q")); text != "" {
		es = a.matchAudit(es, text)
	}
	if limit > 0 && len(es) > limit {
		es = es[len(es)-limit:]
	}
	a.reply(w, http.StatusOK, map[string]any{"entries": nonNil(es)})
}

// matchAudit keeps the entries whose redacted JSON holds text, ignoring
// case. The stores have no full-text index of the audit log; an
// operator's search over a filtered window is small enough to scan.
func (a *API) matchAudit(es []core.AuditEntry, text string) []core.AuditEntry {
	text = strings.ToLower(text)
	var out []core.AuditEntry
	for _, e := range es {
		raw, err := redactJSON(e, a.o.Redact)
		if err == nil && strings.Contains(strings.ToLower(string(raw)), text) {
			out = append(out, e)
		}
	}
	return out
}

// memoryHit is one result of GET /api/v1/memory/search.
type memoryHit struct {
	ID      string   `json:"id"`
	Path    string   `json:"path"`
	Title   string   `json:"title"`
	Type    string   `json:"type"`
	Tags    []string `json:"tags,omitempty"`
	Content string   `json:"content"`
	Score   float64  `json:"score"`
	// Trust and Scope say how far to rely on it (admin_approved, …) and
	// who sees it (workspace here).
	Trust     string    `json:"trust"`
	Scope     string    `json:"scope"`
	Version   int       `json:"version"`
	UpdatedAt time.Time `json:"updated_at"`
}

// memorySearch answers GET /api/v1/memory/search?q=[&limit=] over the
// workspace's trusted documents, best first.
func (a *API) memorySearch(w http.ResponseWriter, r *http.Request, _ core.Actor) {
	if a.o.Memory == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "long-term memory is disabled (memory.enabled)")
		return
	}
	text := r.URL.Query().Get("q")
	if text == "" {
		writeKind(w, core.KindInvalid, "q is required")
		return
	}
	limit, ok := intParam(w, r, "limit", 10)
	if !ok {
		return
	}
	ss, err := a.o.Memory.SearchMemory(r.Context(), MemoryQuery{Text: text, Scopes: []docs.Scope{docs.WorkspaceScope}, Limit: limit})
	if err != nil {
		a.fail(w, "memory search", err)
		return
	}
	hits := make([]memoryHit, len(ss))
	for i, s := range ss {
		d := s.Doc
		hits[i] = memoryHit{ID: d.ID, Path: d.Path, Title: d.Title, Type: string(d.Type), Tags: d.Tags, Content: d.Content, Score: s.Score,
			Trust: string(d.Trust), Scope: string(d.Scope.Kind), Version: d.Version, UpdatedAt: d.UpdatedAt}
	}
	a.reply(w, http.StatusOK, map[string]any{"results": hits})
}

// schedules answers GET /api/v1/schedules.
func (a *API) schedules(w http.ResponseWriter, r *http.Request, _ core.Actor) {
	var ss []Schedule
	if a.o.Schedules != nil {
		ss = a.o.Schedules()
	}
	a.reply(w, http.StatusOK, map[string]any{"schedules": nonNil(ss)})
}
