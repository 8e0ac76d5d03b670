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
type eventRedactor struct {
	r *Redactor

	mu      sync.Mutex
	streams map[string]*Stream // by run id, and run id + "/thinking"
}

// Events returns the engine's display filter (core.Deps.Display) over r:
// each call gives one with its own streams, to be used for one engine.
func (r *Redactor) Events() func(core.Event) core.Event {
	er := &eventRedactor{r: r, streams: map[string]*Stream{}}
	return er.redact
}

func (s *eventRedactor) redact(ev core.Event) core.Event {
	switch ev.Type {
	case core.EventToken:
		ev.Text = s.stream(ev.RunID, "").Write(ev.Text)
	case core.EventThinking:
		ev.Text = s.stream(ev.RunID, "/thinking").Write(ev.Text)
	case core.EventThinkingComplete:
		s.end(ev.RunID + "/thinking")
	case core.EventGenerationComplete, core.EventCompleted, core.EventWorkflowError,
		core.EventTransientError, core.EventRateLimit:
		// The step's whole text, redacted whole, is what the stream
		// released plus what it still held; an attempt that failed is
		// streamed again from its start.
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
	return ev
}

// Approval returns a for display: its arguments and reasons redacted.
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

func (s *eventRedactor) stream(runID, part string) *Stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.streams[runID+part]
	if st == nil {
		st = s.r.Stream()
		s.streams[runID+part] = st
	}
	return st
}

// end forgets streams: what they held back is in the text of the event
// that ends the step (redacted whole), or is never shown.
func (s *eventRedactor) end(keys ...string) {
	s.mu.Lock()
	for _, k := range keys {
		delete(s.streams, k)
	}
	s.mu.Unlock()
}
