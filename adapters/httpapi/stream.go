package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Streams (docs/design.md §15): POST …/messages sends a message and streams the
// conversation's events until the run it started or steered completes;
// GET …/events follows the conversation. Both are text/event-stream with
// the event's Seq as the SSE id, so a client that reconnects with
// Last-Event-ID (or ?after=) gets what it missed from the store, then the
// live events, none twice.

// Heartbeat is how often an idle stream gets a comment line, so proxies
// and clients can tell a quiet stream from a dead one.
const Heartbeat = 15 * time.Second

// TailEvery is how often a followed conversation's kept events are read
// for those another replica emitted: the lag of a stream following a run
// on another replica.
const TailEvery = time.Second

// streamBuffer is how many events a stream holds for a client that reads
// more slowly than the run emits. A client further behind is cut off (it
// never delays the run or the chat); it reconnects with Last-Event-ID.
const streamBuffer = 4096

// writeTimeout bounds one write to a client, so a client that stopped
// reading without closing frees its stream.
const writeTimeout = 30 * time.Second

// replayPage is how many kept events one store read returns.
const replayPage = 500

// ValidName reports whether s may be a person's name in a token
// (api:<person>) or the name of a conversation started through the API
// (api:<name>): 1 to 64 letters, digits, '.', '_' or '-', starting with a
// letter or digit.
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > 64 || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// messageRequest is the body of POST …/messages.
type messageRequest struct {
	Text string `json:"text"`
}

// postMessage answers POST /api/v1/conversations/{key}/messages.
func (a *API) postMessage(w http.ResponseWriter, r *http.Request, who core.Actor) {
	key, ok := a.streamKey(w, r)
	if !ok {
		return
	}
	idem, ok := idempotencyKeyOf(w, r)
	if !ok {
		return
	}
	var req messageRequest
	if !decode(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Text) == "" {
		writeKind(w, core.KindInvalid, "text must not be empty")
		return
	}
	in := core.Inbound{ConvKey: key, User: who, Text: req.Text}
	if idem != "" && !core.IsStopCommand(req.Text) {
		var release func()
		if release, ok = a.claim(w, r, idem, req, &in); !ok {
			return // answered: a repeat, or refused
		}
		// The stream is the run's alone, as a repeat's is.
		a.stream(w, r, key, cursor{until: in.RunID}, false, func() error {
			err := a.o.Engine.Handle(r.Context(), in)
			if err != nil {
				release() // refused: nothing runs, so the key is free
			}
			return err
		})
		return
	}
	if core.IsStopCommand(req.Text) {
		// A stop with nothing running emits nothing: its stream would wait
		// for a completed that never comes.
		if st, err := a.o.Engine.Status(r.Context(), key); err == nil && !st.Busy {
			if err := a.o.Engine.Handle(r.Context(), in); err != nil {
				a.failStart(w, err)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, ": nothing was running\n\n")
			return
		}
	}
	a.stream(w, r, key, cursor{}, true, func() error { return a.o.Engine.Handle(r.Context(), in) })
}

// followEvents answers GET /api/v1/conversations/{key}/events.
func (a *API) followEvents(w http.ResponseWriter, r *http.Request, _ core.Actor) {
	from, ok := cursorOf(w, r)
	if !ok || !a.followable(w, r, r.PathValue("key"), from.runID) {
		return
	}
	a.stream(w, r, r.PathValue("key"), from, false, nil)
}

// streamKey is the conversation a stream is about: an "api:<name>"
// conversation, which need not exist yet, or any existing one.
func (a *API) streamKey(w http.ResponseWriter, r *http.Request) (string, bool) {
	key := r.PathValue("key")
	if name, ok := strings.CutPrefix(key, ConvPrefix); ok {
		if !ValidName(name) {
			writeError(w, http.StatusBadRequest, "invalid_key", `an API conversation is "api:<name>", the name 1 to 64 letters, digits and -_., starting with a letter or digit`)
			return "", false
		}
		return key, true
	}
	_, ok := a.existing(w, r, key)
	if !ok {
		return "", false
	}
	return key, true
}

// cursor says what a stream replays before the live events: the
// conversation's events after a sequence number, or one run's.
type cursor struct {
	replay bool
	after  int64
	runID  string
	// until, when set, is the one run the stream is about: it ends after
	// that run's completed and shows no other run's events.
	until string
}

// cursorOf reads Last-Event-ID (what a reconnecting client sends), or
// ?after=N, or ?run=ID; none of them means live events only.
func cursorOf(w http.ResponseWriter, r *http.Request) (cursor, bool) {
	var c cursor
	q := r.URL.Query()
	raw := r.Header.Get("Last-Event-ID")
	if raw == "" {
		raw = q.Get("after")
	}
	if raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 {
			writeKind(w, core.KindInvalid, "Last-Event-ID (or after) must be an event's id, a non-negative integer")
			return c, false
		}
		c.replay, c.after = true, n
	}
	if id := q.Get("run"); id != "" {
		c.replay, c.runID = true, id
	}
	return c, true
}

// stream joins the conversation's hub (so every event from now on reaches
// it), then calls start (sending the message of a POST), replays what from
// selects and follows the live events. A POST's stream (untilDone) ends
// after the completed event that leaves the conversation with nothing
// running or queued; a follow ends when the client goes, falls too far
// behind, the token is revoked or the API closes.
func (a *API) stream(w http.ResponseWriter, r *http.Request, key string, from cursor, untilDone bool, start func() error) {
	live := newLiveStream()
	// Joined before anything is sent or read: every event after this point
	// is live, every one before it is in the store (Engine.Events).
	defer a.hubs.join(a, key, live)()
	if start != nil {
		if err := start(); err != nil {
			a.failStart(w, err)
			return
		}
	}
	ctx := r.Context()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	out := &sseWriter{w: w, rc: http.NewResponseController(w)}
	if err := out.send(); err != nil {
		return
	}
	last := from.after
	if from.replay {
		for {
			evs, err := a.o.Engine.Events(ctx, core.EventQuery{ConvKey: key, After: last, RunID: from.runID, Limit: replayPage})
			if err != nil {
				a.log.Error("api: replaying events", "conv", key, "err", err)
				out.comment("the missed events could not be read; reconnect to try again")
				return
			}
			for _, ev := range evs {
				f, err := encodeFrame(ev)
				if err != nil {
					a.log.Error("api: encoding an event", "conv", key, "seq", ev.Seq, "err", err)
					return
				}
				out.buf.Write(f.after(last).data)
				last = ev.Seq
				if from.until != "" && ev.RunID == from.until && ev.Type == core.EventCompleted {
					out.send()
					return
				}
			}
			if out.send() != nil {
				return
			}
			if len(evs) < replayPage {
				break
			}
		}
	}
	beat := time.NewTicker(a.heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-live.wake:
			// Everything waiting goes out in one write and one flush.
			done := false
			for _, f := range live.take() {
				if f.seq <= last || (from.until != "" && f.runID != from.until) {
					continue // replayed already, or another run's
				}
				out.buf.Write(f.after(last).data)
				last = f.seq
				if f.typ == core.EventCompleted && (from.until == f.runID || untilDone && a.idle(ctx, key, f.runID)) {
					done = true
					break
				}
			}
			if out.send() != nil || done {
				return
			}
		case <-beat.C:
			if !a.stillValid(r) {
				out.comment("the token was revoked")
				return
			}
			if out.comment("heartbeat") != nil {
				return
			}
		case <-live.full:
			a.log.Warn("api: a stream fell too far behind and was closed", "conv", key, "last_event_id", last)
			out.comment("too far behind: reconnect with Last-Event-ID")
			return
		case <-a.done:
			return
		case <-ctx.Done():
			return
		}
	}
}

// idle reports whether, run having completed, the conversation has
// nothing running or queued: a message the POST sent that was queued
// behind run has not been answered yet.
func (a *API) idle(ctx context.Context, key, run string) bool {
	st, err := a.o.Engine.Status(ctx, key)
	if err != nil {
		return true
	}
	if st.ActiveRun != nil && st.ActiveRun.ID != run {
		return false
	}
	return st.Queued == 0
}

// stillValid re-checks the request's token, so revoking it ends its
// streams within a heartbeat.
func (a *API) stillValid(r *http.Request) bool {
	_, err := a.authenticate(r)
	return err == nil
}

// failStart answers a message the engine refused, before the stream
// began: by its kind, as fail does (a run limit is 429 with Retry-After,
// shutting down 503).
func (a *API) failStart(w http.ResponseWriter, err error) {
	a.fail(w, "message", err)
}

// hubs are the API's subscriptions to the engine, one per conversation
// that has streams: each event is encoded and redacted once, whatever the
// number of streams following the conversation.
type hubs struct {
	mu sync.Mutex
	m  map[string]*hub
}

// join adds s to the hub of conversation key, subscribing the hub when it
// is the first, and returns leave, which removes s (and unsubscribes the
// hub when it was the last). A new hub notes the conversation's latest
// kept event before join returns: what a stream does not replay itself
// comes after it, live or from the store.
func (hs *hubs) join(a *API, key string, s *liveStream) (leave func()) {
	hs.mu.Lock()
	if hs.m == nil {
		hs.m = map[string]*hub{}
	}
	h := hs.m[key]
	created := h == nil
	if created {
		ctx, stop := context.WithCancel(context.Background())
		h = &hub{a: a, key: key, streams: map[*liveStream]struct{}{}, ready: make(chan struct{})}
		hs.m[key] = h
		unsubscribe := a.o.Engine.Subscribe(key, h, core.SubscribeOptions{})
		tailed := make(chan struct{})
		h.cancel = func() {
			unsubscribe()
			stop()
			<-tailed
		}
		defer func() {
			h.baseline(ctx)
			close(h.ready)
			go func() {
				defer close(tailed)
				h.tail(ctx)
			}()
		}()
	}
	h.mu.Lock()
	h.streams[s] = struct{}{}
	h.mu.Unlock()
	hs.mu.Unlock()
	if !created {
		<-h.ready
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			hs.mu.Lock()
			defer hs.mu.Unlock()
			h.mu.Lock()
			delete(h.streams, s)
			empty := len(h.streams) == 0
			h.mu.Unlock()
			if empty && hs.m[key] == h {
				delete(hs.m, key)
				h.cancel()
			}
		})
	}
}

// hub is the one subscription of a conversation's streams: the engine's
// live events, and the events other replicas keep in the store (tail).
// It hands each event on once, in Seq order, whichever way it came first.
type hub struct {
	a      *API
	key    string
	cancel func()

	// ready is closed once the hub knows where the store's events end.
	ready chan struct{}

	mu      sync.Mutex
	streams map[*liveStream]struct{}
	// last is the highest Seq handed on.
	last int64
}

// Send implements core.EventSender: it queues ev for every stream, never
// waiting for one.
func (h *hub) Send(_ context.Context, ev core.Event) error { return h.hand(ev) }

// hand encodes ev once and queues the frame for every stream, unless an
// event at or after its Seq was handed on already.
func (h *hub) hand(ev core.Event) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Seq <= h.last {
		return nil
	}
	f, err := encodeFrame(ev)
	if err != nil {
		return fmt.Errorf("httpapi: encoding event %d of %s: %w", ev.Seq, h.key, err)
	}
	h.last = ev.Seq
	for s := range h.streams {
		s.push(f)
	}
	return nil
}

// baseline notes the conversation's latest kept event: the tail hands on
// only what comes after it.
func (h *hub) baseline(ctx context.Context) {
	latest, err := h.a.o.Engine.Events(ctx, core.EventQuery{ConvKey: h.key, Latest: true})
	if err != nil {
		h.a.log.Warn("api: reading a conversation's latest event", "conv", h.key, "err", err)
	}
	h.mu.Lock()
	for _, ev := range latest {
		h.last = max(h.last, ev.Seq)
	}
	h.mu.Unlock()
}

// tail reads the kept events of the conversation every TailEvery until ctx
// ends: a replica following a conversation that another replica runs gets
// its events this way (this engine emits none of them). In one process it
// finds only what the subscription handed on already.
func (h *hub) tail(ctx context.Context) {
	t := time.NewTicker(h.a.o.TailEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		after := h.last
		h.mu.Unlock()
		evs, err := h.a.o.Engine.Events(ctx, core.EventQuery{ConvKey: h.key, After: after, Limit: replayPage})
		if err != nil {
			if ctx.Err() == nil {
				h.a.log.Warn("api: reading a conversation's kept events", "conv", h.key, "err", err)
			}
			continue
		}
		for _, ev := range evs {
			if err := h.hand(ev); err != nil {
				h.a.log.Error("api: handing on a kept event", "conv", h.key, "err", err)
			}
		}
	}
}

// frame is an event as a stream writes it.
type frame struct {
	seq   int64
	typ   core.EventType
	runID string
	data  []byte // "id: …\nevent: …\ndata: …\n\n"
	// gap: the events a gap frame (core.EventGap) names.
	gap core.Gap
}

// encodeFrame writes ev as "id: <seq>", "event: <type>" and one line of
// JSON. Events are safe to show as the engine hands them out (its display
// filter, core.Deps.Display, is the one door they leave by), live or
// replayed from its event log, so they are not redacted again here.
//
// A gap the engine's event log kept in place of events it could not keep
// (docs/design.md §16) is "event: gap" with {"from": N, "to": M}, its id M: a
// client is told what it cannot have instead of missing it silently.
func encodeFrame(ev core.Event) (frame, error) {
	if ev.Type == core.EventGap && ev.Gap != nil {
		return gapFrame(ev.RunID, *ev.Gap), nil
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "id: %d\nevent: %s\ndata: ", ev.Seq, ev.Type)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil {
		return frame{}, err
	}
	b.WriteString("\n") // after Encode's own: the blank line that ends the frame
	return frame{seq: ev.Seq, typ: ev.Type, runID: ev.RunID, data: b.Bytes()}, nil
}

func gapFrame(runID string, g core.Gap) frame {
	data := fmt.Appendf(nil, "id: %d\nevent: %s\ndata: {\"from\":%d,\"to\":%d}\n\n", g.To, core.EventGap, g.From, g.To)
	return frame{seq: g.To, typ: core.EventGap, runID: runID, data: data, gap: g}
}

// after is f for a stream that has shown the events up to last: a gap
// that began at or before last names only what the stream lacks.
func (f frame) after(last int64) frame {
	if f.typ != core.EventGap || f.gap.From > last {
		return f
	}
	return gapFrame(f.runID, core.Gap{From: last + 1, To: f.gap.To})
}

// liveStream is one stream's queue of frames. It grows as needed up to
// streamBuffer; a stream further behind is cut off (full closes), so a
// client that stops reading never holds up the hub, the run or the chat.
type liveStream struct {
	mu       sync.Mutex
	q        []frame
	wake     chan struct{} // a frame is waiting
	full     chan struct{}
	fullOnce sync.Once
}

func newLiveStream() *liveStream {
	return &liveStream{wake: make(chan struct{}, 1), full: make(chan struct{})}
}

func (s *liveStream) push(f frame) {
	s.mu.Lock()
	if len(s.q) >= streamBuffer {
		s.mu.Unlock()
		s.fullOnce.Do(func() { close(s.full) })
		return
	}
	s.q = append(s.q, f)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// take returns the waiting frames and empties the queue.
func (s *liveStream) take() []frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.q
	s.q = nil
	return q
}

// sseWriter writes a stream: what is in buf goes out in one write and one
// flush, bounded by writeTimeout.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf bytes.Buffer
}

// comment writes an SSE comment line, which clients ignore.
func (s *sseWriter) comment(text string) error {
	fmt.Fprintf(&s.buf, ": %s\n\n", text)
	return s.send()
}

// send writes and flushes buf.
func (s *sseWriter) send() error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if s.buf.Len() > 0 {
		_, err := s.w.Write(s.buf.Bytes())
		s.buf.Reset()
		if err != nil {
			return err
		}
	}
	return s.rc.Flush()
}
