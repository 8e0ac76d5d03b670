package redact

import (
	"encoding/json"
	"sync"

	"github.com/opsgate/opsgate/core"
)

// eventRedactor, behind [Redactor.Events], is the choke point for everything opsgate shows people:
// the engine passes every event through it (core.Deps.Display) before the
// event is kept or handed to any subscriber (chat platforms, the terminal,
// API streams, notify cards), so all of them, and a stream replayed from
// the store, show the same redacted text. Streamed tokens go through one
// Stream per run, which holds back whatever could still become a
// secret, so no prefix of a secret reaches anyone, not even in an
// intermediate edit; every other text (tool lines, results, errors,
// approval arguments and reasons, final answers) is redacted whole. The
// engine's copies are never changed: what is stored in the transcript, and
// what runs once approved, stays exact.
//
// Streams are whole (docs/design.md §16): what a stream still holds when its
// generation completes is released as a last token before
// generation.complete, whose text is then exactly what the tokens showed;
// a fragment that is all held back shows nothing (the engine drops a token
// without text).
type eventRedactor struct {
	r *Redactor

	mu      sync.Mutex
	streams map[string]*textStream // by run id, and run id + "/thinking"
}

// textStream is a run's streamed text: what was shown (the Stream), and
// the length and FNV-1a hash of what the model sent, to tell whether a
// final text is the one streamed without keeping a copy of it.
type textStream struct {
	st   *Stream
	n    int
	hash uint64
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnv(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// sent adds fragment to what the model sent.
func (ts *textStream) sent(fragment string) {
	ts.n += len(fragment)
	ts.hash = fnv(ts.hash, fragment)
}

// same reports whether text is what the model sent.
func (ts *textStream) same(text string) bool {
	return len(text) == ts.n && fnv(fnvOffset, text) == ts.hash
}

// Events returns the engine's display filter (core.Deps.Display) over r:
// each call gives one with its own streams, to be used for one engine.
func (r *Redactor) Events() func(dst []core.Event, ev core.Event) []core.Event {
	er := &eventRedactor{r: r, streams: map[string]*textStream{}}
	return er.redact
}

func (s *eventRedactor) redact(dst []core.Event, ev core.Event) []core.Event {
	switch ev.Type {
	case core.EventGenerationStart:
		// A new model call streams a new text (a retry starts over).
		s.end(ev.RunID, ev.RunID+"/thinking")
	case core.EventToken:
		ev.Text = s.write(ev.RunID, ev.Text)
	case core.EventThinking:
		ev.Text = s.write(ev.RunID+"/thinking", ev.Text)
	case core.EventThinkingComplete:
		if tail, _ := s.finish(ev.RunID+"/thinking", ""); tail != "" {
			dst = append(dst, core.Event{Type: core.EventThinking, Text: tail})
		}
	case core.EventGenerationComplete:
		// What the stream still holds goes out as the last token; the
		// text of the whole is what the tokens showed.
		tail, whole := s.finish(ev.RunID, ev.Text)
		if tail != "" {
			dst = append(dst, core.Event{Type: core.EventToken, Text: tail})
		}
		s.end(ev.RunID + "/thinking")
		ev.Text = whole
	case core.EventCompleted, core.EventWorkflowError, core.EventTransientError, core.EventRateLimit:
		// A step that failed or was stopped mid-stream: what its stream
		// held is never shown; an attempt that failed is streamed again
		// from its start.
		s.end(ev.RunID, ev.RunID+"/thinking")
		ev.Text = s.r.String(ev.Text)
	default:
		ev.Text = s.r.String(ev.Text)
	}
	ev.Error = s.r.String(ev.Error)
	if ev.Call != nil {
		c := s.call(*ev.Call)
		ev.Call = &c
	}
	if len(ev.Calls) > 0 {
		calls := make([]core.CallInfo, len(ev.Calls))
		for i, c := range ev.Calls {
			calls[i] = s.call(c)
		}
		ev.Calls = calls
	}
	if ev.Approval != nil {
		a := s.r.Approval(*ev.Approval)
		ev.Approval = &a
	}
	return append(dst, ev)
}

// Approval returns a for display: its arguments, reasons and preview redacted.
// The approval in the store, which is what runs, is not touched.
func (r *Redactor) Approval(a core.Approval) core.Approval {
	a.Arguments = redactJSON(r, a.Arguments)
	a.Reason = r.String(a.Reason)
	votes := make([]core.Vote, len(a.Votes))
	for i, v := range a.Votes {
		v.Reason = r.String(v.Reason)
		votes[i] = v
	}
	a.Votes = votes
	if p := a.Preview; p != nil {
		// A preview shows file contents and objects: secrets in them are
		// redacted like any other text (docs/design.md §18).
		c := *p
		c.Summary, c.Diff, c.Why = r.String(c.Summary), r.String(c.Diff), r.String(c.Why)
		c.Changed, c.Stale = r.String(c.Changed), r.String(c.Stale)
		a.Preview = &c
	}
	return a
}

func (s *eventRedactor) call(c core.CallInfo) core.CallInfo {
	c.Arguments = s.json(c.Arguments)
	c.Result = s.r.String(c.Result)
	if c.Progress != nil {
		p := *c.Progress
		p.Message = s.r.String(p.Message)
		c.Progress = &p
	}
	return c
}

func (s *eventRedactor) json(raw json.RawMessage) json.RawMessage { return redactJSON(s.r, raw) }

// redactJSON redacts a JSON document for display. The redactor keeps JSON
// structure (a secret value becomes the string "[REDACTED:kind]").
func redactJSON(r *Redactor, raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	return json.RawMessage(r.String(string(raw)))
}

// write adds a fragment to the stream key and returns what became safe
// to show.
func (s *eventRedactor) write(key, fragment string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.streams[key]
	if ts == nil {
		ts = &textStream{st: s.r.Stream(), hash: fnvOffset}
		s.streams[key] = ts
	}
	ts.sent(fragment)
	return ts.st.Write(fragment)
}

// finish ends the stream key: it returns what the stream still held
// (redacted) and the whole of text for display. When text is what was
// streamed, the whole is exactly what the stream released, so the tokens
// add up to it by construction; otherwise (a text that was not streamed,
// or not as sent) it is text redacted whole.
func (s *eventRedactor) finish(key, text string) (tail, whole string) {
	s.mu.Lock()
	ts := s.streams[key]
	delete(s.streams, key)
	s.mu.Unlock()
	if ts == nil {
		return "", s.r.String(text)
	}
	tail = ts.st.Flush()
	if ts.same(text) {
		return tail, ts.st.Text()
	}
	return tail, s.r.String(text)
}

// end forgets streams: what they held back is never shown.
func (s *eventRedactor) end(keys ...string) {
	s.mu.Lock()
	for _, k := range keys {
		delete(s.streams, k)
	}
	s.mu.Unlock()
}
