package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/opsgate/opsgate/core"
)

// conversations answers GET /api/v1/conversations[?prefix=&limit=], the
// most recently active first, each with its latest run.
func (a *API) conversations(w http.ResponseWriter, r *http.Request, _ core.Actor) {
	limit, ok := intParam(w, r, "limit", 100)
	if !ok {
		return
	}
	v := viewerOf(r)
	f := core.ConversationFilter{KeyPrefix: r.URL.Query().Get("prefix"), Limit: limit}
	if !v.all {
		f.Limit = 0 // what may not be seen is left out before the limit
	}
	cs, err := a.o.Store.Conversations(r.Context(), f)
	if err == nil {
		cs, err = visible(r.Context(), v, cs, func(c core.Conversation) string { return c.Key })
	}
	if err != nil {
		a.fail(w, "conversations", err)
		return
	}
	if limit > 0 && len(cs) > limit {
		cs = cs[:limit]
	}
	items := make([]conversationItem, len(cs))
	for i, c := range cs {
		items[i].Conversation = c
		runs, err := a.o.Store.ConversationRuns(r.Context(), c.Key)
		if err != nil {
			a.fail(w, "runs", err)
			return
		}
		if n := len(runs); n > 0 {
			items[i].LatestRun = &runs[n-1]
		}
	}
	a.reply(w, http.StatusOK, map[string]any{"conversations": items})
}

// conversationItem is a conversation as the list shows it: with its latest
// run (status, times, usage), so a list needs no request per row.
type conversationItem struct {
	core.Conversation
	LatestRun *core.Run `json:"latest_run,omitempty"`
}

// conversationView is GET /api/v1/conversations/{key}.
type conversationView struct {
	Key       string         `json:"key"`
	Title     string         `json:"title"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	Messages  []core.Message `json:"messages"`
	Runs      []core.Run     `json:"runs"`
}

func (a *API) conversation(w http.ResponseWriter, r *http.Request, _ core.Actor) {
	key := r.PathValue("key")
	c, ok := a.existing(w, r, key)
	if !ok {
		return
	}
	v := conversationView{Key: c.Key, Title: c.Title, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	var err error
	if v.Messages, err = a.o.Store.Messages(r.Context(), key); err != nil {
		a.fail(w, "messages", err)
		return
	}
	if v.Runs, err = a.o.Store.ConversationRuns(r.Context(), key); err != nil {
		a.fail(w, "runs", err)
		return
	}
	v.Messages, v.Runs = nonNil(v.Messages), nonNil(v.Runs)
	a.reply(w, http.StatusOK, v)
}

// find returns the stored conversation key, or nil. (Store.Conversation
// would create it; the API only reads.)
// existing returns conversation key, or answers the 404 of a missing one
// (or the store's failure) and reports false.
func (a *API) existing(w http.ResponseWriter, r *http.Request, key string) (*core.Conversation, bool) {
	c, err := a.find(r.Context(), key)
	if err != nil {
		a.fail(w, "conversation", err)
		return nil, false
	}
	if c == nil {
		writeKind(w, core.KindNotFound, "no conversation "+strconv.Quote(key))
		return nil, false
	}
	return c, true
}

func (a *API) find(ctx context.Context, key string) (*core.Conversation, error) {
	cs, err := a.o.Store.Conversations(ctx, core.ConversationFilter{KeyPrefix: key})
	if err != nil {
		return nil, err
	}
	for i := range cs {
		if cs[i].Key == key {
			return &cs[i], nil
		}
	}
	return nil, nil
}

// followable answers 404 unless conversation key exists and, when runID
// is set, had that run (docs/design.md §16): a stream of what does not exist would
// wait for ever.
func (a *API) followable(w http.ResponseWriter, r *http.Request, key, runID string) bool {
	_, ok := a.existing(w, r, key)
	if !ok {
		return false
	}
	if runID == "" {
		return true
	}
	run, err := a.o.Store.Run(r.Context(), runID)
	if err == nil && run.ConvKey != key {
		err = core.ErrNotFound
	}
	if err != nil {
		a.fail(w, "run "+strconv.Quote(runID)+" of "+strconv.Quote(key), err)
		return false
	}
	return true
}

// intParam reads a non-negative integer query parameter.
func intParam(w http.ResponseWriter, r *http.Request, name string, def int) (int, bool) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		writeKind(w, core.KindInvalid, name+" must be a non-negative integer")
		return 0, false
	}
	return n, true
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
