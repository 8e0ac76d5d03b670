package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/timeline"
	"github.com/opsgate/opsgate/memory/docs"
)

// Prefix is where the API is mounted.
const Prefix = "/api/v1/"

// ConvPrefix starts the keys of the conversations started through the API:
// "api:<name>".
const ConvPrefix = "api:"

// MaxBody is the largest request body accepted; a larger one is 413.
const MaxBody = 1 << 20

// Store is what the API reads of opsgate's durable state. Both stores
// implement it; core.Store stays what the engine calls. Every method is
// safe for concurrent use; a missing run or approval is an error wrapping
// core.ErrNotFound.
type Store interface {
	Conversations(ctx context.Context, f core.ConversationFilter) ([]core.Conversation, error)
	Messages(ctx context.Context, key string) ([]core.Message, error)
	// ConversationRuns returns the runs of a conversation, oldest first.
	ConversationRuns(ctx context.Context, convKey string) ([]core.Run, error)
	Run(ctx context.Context, id string) (core.Run, error)
	Approval(ctx context.Context, id string) (core.Approval, error)
	// PendingApprovals returns every pending approval, oldest first.
	PendingApprovals(ctx context.Context) ([]core.Approval, error)
	Audit(ctx context.Context, f core.AuditFilter) ([]core.AuditEntry, error)
	IdempotencyStore
}

// IdempotencyStore remembers the Idempotency-Keys of POST …/messages
// (docs/design.md §16) in the store, so that a repeat reaching another replica is
// known there too. Both methods are safe for concurrent use, also by
// several processes on one database.
type IdempotencyStore interface {
	// ClaimIdempotencyKey records k unless conversation k.ConvKey holds
	// k.Key already with a record created at or after notBefore (older
	// ones are forgotten). It returns the record that holds the key and
	// whether it is k: of two claims at once, exactly one wins, and the
	// other gets the winner's record.
	ClaimIdempotencyKey(ctx context.Context, k core.IdempotencyKey, notBefore time.Time) (held core.IdempotencyKey, claimed bool, err error)
	// ReleaseIdempotencyKey forgets key of conversation convKey if its
	// record names runID (a request refused after its claim keeps no
	// key); anything else, or nothing, is left alone.
	ReleaseIdempotencyKey(ctx context.Context, convKey, key, runID string) error
}

// Engine is what the API asks of the engine (core.Engine): decisions go
// through policy, a stop ends a conversation's run, messages start runs,
// and streams subscribe to a conversation's events and read the kept ones
// they missed.
type Engine interface {
	Decide(ctx context.Context, d core.Decision) (core.Approval, error)
	Stop(ctx context.Context, convKey string) bool
	Handle(ctx context.Context, in core.Inbound) error
	Status(ctx context.Context, convKey string) (core.Status, error)
	Subscribe(convKey string, s core.EventSender, o core.SubscribeOptions) (cancel func())
	Events(ctx context.Context, q core.EventQuery) ([]core.Event, error)
}

// MemorySearcher searches long-term memory (cmd/opsgate answers it with
// memory.Memory.Search). The API owns the request and result types so that
// it links no store driver.
type MemorySearcher interface {
	SearchMemory(ctx context.Context, q MemoryQuery) ([]MemoryResult, error)
}

// MemoryQuery is a memory search: the documents of Scopes that match Text,
// the best Limit.
type MemoryQuery struct {
	Text   string
	Scopes []docs.Scope
	Limit  int
}

// MemoryResult is one document found, with its rank score.
type MemoryResult struct {
	Doc   docs.Document
	Score float64
}

// Schedule is one configured schedule as GET /api/v1/schedules lists it.
type Schedule struct {
	Name   string    `json:"name"`
	Cron   string    `json:"cron"`
	Target string    `json:"target"`
	Prompt string    `json:"prompt"`
	Next   time.Time `json:"next,omitzero"`
}

// Options are the API's collaborators. Store, Tokens, Engine and Redact
// are required; without Memory, memory search answers 503; without
// Schedules, the list is empty.
type Options struct {
	Store  Store
	Tokens TokenStore
	Engine Engine
	// Redact is the redactor of everything shown to people (docs/design.md
	// §11): every string of every response read from the store passes it
	// (events come from the engine safe to show).
	Redact    func(string) string
	Memory    MemorySearcher
	Schedules func() []Schedule
	// Alerts, when set, gives timelines the alerts of incident
	// conversations from the intake's records (else from their events).
	Alerts timeline.Alerts
	// Visibility says who sees which conversation (the policy, docs/design.md
	// §17); without it a token sees only what its person took part in.
	Visibility Visibility
	Logger     *slog.Logger
	// Decided, when set, is told the outcome of every decision request
	// that names an approval (nil: Decide accepted it), as chat clicks
	// are counted: opsgate_approval_clicks_total{platform="api"}.
	Decided func(err error)
	// Heartbeat is how often an idle stream gets a comment; 0 is
	// [Heartbeat].
	Heartbeat time.Duration
	// TailEvery is how often a followed conversation's kept events are
	// read, for those another replica emits; 0 is [TailEvery].
	TailEvery time.Duration
}

// API is the http.Handler of /api/v1. It is safe for concurrent use.
type API struct {
	o         Options
	log       *slog.Logger
	mux       *http.ServeMux
	heartbeat time.Duration

	// hubs are the subscriptions of the streams, one per conversation.
	hubs hubs
	// done ends every stream when closed (Close).
	done      chan struct{}
	closeOnce sync.Once
}

var _ http.Handler = (*API)(nil)

// New returns the API over o; it starts nothing.
func New(o Options) *API {
	a := &API{o: o, log: o.Logger, mux: http.NewServeMux(), heartbeat: o.Heartbeat, done: make(chan struct{})}
	if a.heartbeat <= 0 {
		a.heartbeat = Heartbeat
	}
	if a.o.TailEvery <= 0 {
		a.o.TailEvery = TailEvery
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.o.Redact == nil {
		a.o.Redact = func(s string) string { return s }
	}
	routes := map[string]func(http.ResponseWriter, *http.Request, core.Actor){
		"GET /api/v1/conversations":                 a.conversations,
		"GET /api/v1/conversations/{key}":           a.conversation,
		"POST /api/v1/conversations/{key}/messages": a.postMessage,
		"GET /api/v1/conversations/{key}/events":    a.followEvents,
		"GET /api/v1/conversations/{key}/timeline":  a.timeline,
		"GET /api/v1/approvals":                     a.approvals,
		"POST /api/v1/approvals/{id}/decision":      a.decision,
		"POST /api/v1/runs/{id}/stop":               a.stop,
		"GET /api/v1/audit":                         a.audit,
		"GET /api/v1/memory/search":                 a.memorySearch,
		"GET /api/v1/schedules":                     a.schedules,
		"GET /api/v1/tokens":                        a.tokens,
	}
	for pattern, h := range routes {
		a.mux.HandleFunc(pattern, a.guard(pattern, h))
	}
	a.mux.HandleFunc(Prefix, a.noRoute)
	return a
}

// methods are those the API's routes may have; HEAD comes with GET.
var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// noRoute answers a request no route took: 405 method_not_allowed with
// Allow when the path is a route's with another method (docs/design.md §16), 404
// otherwise. (The mux would answer 405 itself, but its catch-all for
// /api/v1/ matches every method first.)
func (a *API) noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range methods {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := a.mux.Handler(probe); pattern != Prefix && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		writeKind(w, core.KindNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed on "+r.URL.Path+"; allowed: "+strings.Join(allow, ", "))
}

// Close ends every open stream (its client may reconnect elsewhere with
// Last-Event-ID); an http.Server's Shutdown waits for them otherwise.
// Register it with http.Server.RegisterOnShutdown.
func (a *API) Close() { a.closeOnce.Do(func() { close(a.done) }) }

// ServeHTTP authenticates the request, limits its body and routes it.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tok, ok := a.admit(w, r)
	if !ok {
		return
	}
	if r.ContentLength > MaxBody {
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", "the request body is over 1 MiB")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
	a.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), viewerKey{}, a.newViewer(tok))))
}

// reply writes v as JSON with every string redacted.
func (a *API) reply(w http.ResponseWriter, status int, v any) {
	body, err := redactJSON(v, a.o.Redact)
	if err != nil {
		a.log.Error("encoding a response", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "the response could not be encoded")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// fail answers err by its kind, from core's one table: the kind's status
// and code, and its description after what was asked for ("run 9f3a: it
// no longer exists, or never did"). Two kinds carry a better sentence:
// the policy's reason for a refusal, and the run limit's. An internal
// failure is logged; its text is not shown.
func (a *API) fail(w http.ResponseWriter, what string, err error) {
	k := core.KindOf(err)
	info := k.Info()
	msg := what + ": " + info.Text
	var na *core.NotAllowedError
	var limit *core.LimitError
	switch {
	case errors.As(err, &na) && na.Reason != "":
		msg = a.o.Redact(na.Reason)
	case errors.As(err, &limit):
		msg = limit.Error()
	case k == core.KindInternal:
		a.log.Error("api: "+what, "err", err)
	}
	if k == core.KindRateLimited {
		w.Header().Set("Retry-After", "60")
	}
	writeError(w, info.Status, info.Code, msg)
}

// writeKind answers with kind k's status and code and message: the API's
// own refusals (a path that names nothing, a bad parameter) say the same
// kinds as the engine's.
func writeKind(w http.ResponseWriter, k core.Kind, message string) {
	info := k.Info()
	writeError(w, info.Status, info.Code, message)
}

// errorBody is every error's shape.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	var b errorBody
	b.Error.Code, b.Error.Message = code, message
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(b)
}
