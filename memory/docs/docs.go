// Package docs is the long-term memory document as both stores keep it
// (docs/design.md §14): scopes, trust, types, versions, source references and usage
// records, and Store, the storage contract memory/sqlite and
// memory/postgres implement and docstest checks. Retrieval, ranking and
// the memory tools live in package memory, which consumes Store.
package docs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
)

// ScopeKind is who a document is for.
type ScopeKind string

// Scope kinds, from the widest.
const (
	Workspace    ScopeKind = "workspace"
	Channel      ScopeKind = "channel"
	User         ScopeKind = "user"
	Conversation ScopeKind = "conversation"
)

// Scope is a document's scope: a kind and its key (a channel key, a
// person, a conversation key; empty for the workspace).
type Scope struct {
	Kind ScopeKind `json:"kind"`
	Key  string    `json:"key,omitempty"`
}

// WorkspaceScope is the scope every conversation sees.
var WorkspaceScope = Scope{Kind: Workspace}

// String is the scope as written in front matter and on the command line:
// "workspace", "channel:<key>", "user:<person>", "conversation:<key>".
func (s Scope) String() string {
	if s.Kind == Workspace {
		return string(Workspace)
	}
	return string(s.Kind) + ":" + s.Key
}

// ParseScope parses Scope.String's form.
func ParseScope(s string) (Scope, error) {
	if s == string(Workspace) {
		return WorkspaceScope, nil
	}
	kind, key, ok := strings.Cut(s, ":")
	switch ScopeKind(kind) {
	case Channel, User, Conversation:
		if ok && key != "" {
			return Scope{Kind: ScopeKind(kind), Key: key}, nil
		}
	}
	return Scope{}, fmt.Errorf("scope %q: want workspace, channel:<key>, user:<person> or conversation:<key>", s)
}

// Trust is how far a document is believed. Only agent_draft is untrusted.
type Trust string

// Trust levels (docs/design.md §14).
const (
	AdminApproved Trust = "admin_approved"
	SystemSeeded  Trust = "system_seeded"
	UserAuthored  Trust = "user_authored"
	AgentDraft    Trust = "agent_draft"
)

// Trusts are the trust levels, most trusted first.
var Trusts = []Trust{AdminApproved, SystemSeeded, UserAuthored, AgentDraft}

// Weight is the trust's value in ranking: 1.0, 0.95, 0.85, 0.45; 0 for an
// unknown level.
func (t Trust) Weight() float64 {
	switch t {
	case AdminApproved:
		return 1.0
	case SystemSeeded:
		return 0.95
	case UserAuthored:
		return 0.85
	case AgentDraft:
		return 0.45
	}
	return 0
}

// Valid reports whether t is one of Trusts.
func (t Trust) Valid() bool { return t.Weight() > 0 }

// Type is what kind of knowledge a document holds.
type Type string

// Document types (docs/design.md §14).
const (
	Runbook               Type = "runbook"
	IncidentLesson        Type = "incident_lesson"
	ServiceContext        Type = "service_context"
	WorkspaceConvention   Type = "workspace_convention"
	VerificationChecklist Type = "verification_checklist"
	ToolUsageLesson       Type = "tool_usage_lesson"
	UserPreference        Type = "user_preference"
	ConversationNote      Type = "conversation_note"
	// Postmortem is an incident's postmortem, drafted by the model from
	// its timeline (docs/design.md §19).
	Postmortem Type = "postmortem"
)

// Types are the document types.
var Types = []Type{Runbook, IncidentLesson, ServiceContext, WorkspaceConvention,
	VerificationChecklist, ToolUsageLesson, UserPreference, ConversationNote, Postmortem}

// Valid reports whether t is one of Types.
func (t Type) Valid() bool {
	for _, x := range Types {
		if t == x {
			return true
		}
	}
	return false
}

// Status is a document's life cycle state. Archived documents are kept
// (with their history) but never retrieved.
type Status string

// Statuses.
const (
	Active   Status = "active"
	Draft    Status = "draft"
	Archived Status = "archived"
)

// Valid reports whether s is a known status.
func (s Status) Valid() bool { return s == Active || s == Draft || s == Archived }

// Source is where a document (version) came from.
type Source struct {
	ConvKey string `json:"conv_key,omitempty"`
	RunID   string `json:"run_id,omitempty"`
	CallID  string `json:"call_id,omitempty"`
	File    string `json:"file,omitempty"` // an imported file
}

// Document is one memory document as it stands (its latest version).
type Document struct {
	ID      string   `json:"id"`
	Scope   Scope    `json:"scope"`
	Path    string   `json:"path"` // unique per scope
	Title   string   `json:"title"`
	Content string   `json:"content"`
	Type    Type     `json:"type"`
	Tags    []string `json:"tags,omitempty"`
	// Entities maps a kind (namespace, service, workload, environment,
	// incident) to its values, lower case.
	Entities map[string][]string `json:"entities,omitempty"`
	Status   Status              `json:"status"`
	Trust    Trust               `json:"trust"`
	Source   Source              `json:"source"`
	// Author is the identity who wrote the current version ("slack:U1",
	// "cli:alice", "agent").
	Author  string `json:"author,omitempty"`
	Version int    `json:"version"` // 1 for a new document
	// SHA256 is Hash(Content), set by the store.
	SHA256    string    `json:"sha256"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Hash is the hex SHA-256 of a document's content: what memory_patch
// expects and import compares.
func Hash(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// Same reports whether a and b hold the same version: every field a save
// can change but the id, version, author, source and times.
func Same(a, b Document) bool {
	return a.Scope == b.Scope && a.Path == b.Path && a.Title == b.Title && a.Content == b.Content &&
		a.Type == b.Type && a.Status == b.Status && a.Trust == b.Trust &&
		strings.Join(a.Tags, "\x00") == strings.Join(b.Tags, "\x00") && sameEntities(a.Entities, b.Entities)
}

func sameEntities(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || strings.Join(va, "\x00") != strings.Join(vb, "\x00") {
			return false
		}
	}
	return true
}

// Version is one entry of a document's append-only history: the document
// as that version left it, and why it changed.
type Version struct {
	Doc  Document  `json:"doc"`
	Note string    `json:"note,omitempty"` // "created", "patched", "promoted by alice", …
	At   time.Time `json:"at"`
}

// Usage records that a run was given a document.
type Usage struct {
	DocID   string    `json:"doc_id"`
	ConvKey string    `json:"conv_key"`
	RunID   string    `json:"run_id"`
	Score   float64   `json:"score"`
	At      time.Time `json:"at"`
}

// Query is a full-text search. The store matches documents containing any
// of Terms (OR), in one of Scopes, with one of Statuses.
type Query struct {
	// Terms are lower-case words of letters and digits, already free of
	// stop words; the store ORs them and ranks by its text relevance
	// (SQLite FTS5 bm25, Postgres ts_rank over websearch_to_tsquery).
	// Over many documents a store may rank by the query's rarest terms
	// only, where reading the common ones would cost more than they add
	// (memory/sqlite beyond about a thousand matches): a document with none
	// of the rare terms may then be missed.
	Terms []string
	// Scopes limits the search; empty matches nothing.
	Scopes []Scope
	// Statuses: empty means Active and Draft (never Archived).
	Statuses []Status
	// Limit is the number of matches to return (best first); 0 means 20.
	Limit int
}

// Match is a search result. Text is the store's relevance, larger is
// better and always > 0; it is comparable within one search only.
type Match struct {
	Doc  Document
	Text float64
}

// Filter lists documents. Zero fields match everything.
type Filter struct {
	Scopes   []Scope
	Statuses []Status
	Trust    Trust
	Type     Type
	Limit    int // 0: no limit
}

// Save says how SaveDocument treats the current version.
type Save struct {
	// ExpectSHA, when set, must be the current version's SHA256, or the
	// save fails with a *ConflictError carrying the current version.
	ExpectSHA string
	// Note is recorded with the new version.
	Note string
	// At is the save's time; zero means now.
	At time.Time
}

// Errors.
var (
	// ErrNotFound is core.ErrNotFound, said of a document: errors.Is
	// holds for both, and its kind is KindNotFound.
	ErrNotFound = fmt.Errorf("memory document %w", core.ErrNotFound)
	// ErrPathTaken: another document of the target scope has the path.
	ErrPathTaken = errors.New("another memory document of that scope has that path")
	// ErrConflict is matched by *ConflictError.
	ErrConflict = errors.New("memory document changed since it was read")
)

// ConflictError is a save whose ExpectSHA is not the current version's.
type ConflictError struct{ Current Document }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%v: %s is at version %d, sha256 %s", ErrConflict, e.Current.Path, e.Current.Version, e.Current.SHA256)
}

// Is makes errors.Is(err, ErrConflict) hold.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Store keeps memory documents. Both stores implement it on the same
// database as the rest of opsgate's state.
type Store interface {
	// SaveDocument creates or updates a document and returns it as stored.
	//   - d.ID empty: the document at (d.Scope, d.Path) is updated if there
	//     is one, else a new one is created with a new random ID, Version 1.
	//   - d.ID set: that document is updated (ErrNotFound if there is
	//     none); its scope and path may change (promotion), and
	//     ErrPathTaken if another document already has them.
	// An update checks opt.ExpectSHA, then: when Same(current, d) nothing
	// is written and the current version is returned (imports are
	// idempotent); else Version is current+1. Every created or changed
	// version is appended to the history with opt.Note. SHA256, Version
	// and the times are set by the store (CreatedAt kept on update).
	SaveDocument(ctx context.Context, d Document, opt Save) (Document, error)
	// Document returns a document by id, or ErrNotFound.
	Document(ctx context.Context, id string) (Document, error)
	// DocumentAt returns the document at a scope's path, or ErrNotFound.
	DocumentAt(ctx context.Context, scope Scope, path string) (Document, error)
	// Documents lists documents matching f, by scope, then path.
	Documents(ctx context.Context, f Filter) ([]Document, error)
	// History returns a document's versions, oldest first (ErrNotFound).
	History(ctx context.Context, id string) ([]Version, error)
	// SearchDocuments is the full-text search of retrieval.
	SearchDocuments(ctx context.Context, q Query) ([]Match, error)
	// RecordUsage appends usage records.
	RecordUsage(ctx context.Context, us []Usage) error
	// Usages returns a document's usage records, newest first, at most limit (0: all).
	Usages(ctx context.Context, docID string, limit int) ([]Usage, error)
}
