package render

import (
	"time"

	"github.com/opsgate/opsgate/core"
)

// A run that pauses for approval ends its draft with "⏸ Waiting for
// approval." When the decision comes, the run goes on in a new draft under
// the approval cards, so that the chat reads in order and the answer
// notifies. The paused draft would keep saying it waits; instead it
// follows its run: the decisions and how the calls went, "continued below"
// once the run goes on, and how the run ended. It is edited in place, a
// few times at most (each decision, the resume, the end), never posted
// again.

// pausedTTL is how long a paused draft is remembered for its run to
// resume; a decision after that leaves the old message as it was.
const pausedTTL = 24 * time.Hour

const footerContinued = "▶️ Continued below."

// rememberPausedLocked keeps the draft of a run that paused for approval,
// for the draft that continues the run to update.
func (s *Sender) rememberPausedLocked(d *draft, now time.Time) {
	for run, p := range s.paused {
		if now.Sub(p.seen) > pausedTTL {
			delete(s.paused, run)
		}
	}
	s.paused[d.run] = d
}

// takePausedLocked returns the paused draft of run, if any, and forgets it:
// only the first draft after the pause continues it.
func (s *Sender) takePausedLocked(run string) *draft {
	p := s.paused[run]
	delete(s.paused, run)
	return p
}

// follow updates a paused draft for an event of its run, which goes on in
// another draft, and reports whether the draft's message should be edited
// now. Decisions show at once; the calls' progress only with the next
// edit (the new draft shows it live).
func (d *draft) follow(ev core.Event) bool {
	if ev.Type == core.EventCompleted {
		d.footer = footerAfterResume(ev.Status)
		return true
	}
	decision := ev.Type == core.EventToolApproved || ev.Type == core.EventToolDenied
	changed := false
	if id, _, _, ok := callOf(ev); ok && d.tools[id] != nil {
		d.applyTool(ev)
		changed = decision
	}
	if !decision && !d.resumed {
		d.resumed = true // the run has gone on: a decision of the batch was its last
	}
	footer := footerContinued
	if !d.resumed && d.awaiting() {
		footer = footerFor(core.RunAwaitingApproval) // other requests of the batch are open
	}
	if d.footer != footer {
		d.footer, changed = footer, true
	}
	return changed
}

// awaiting reports whether a call of the draft still waits for a decision.
func (d *draft) awaiting() bool {
	for _, l := range d.tools {
		if l.state == toolAwaiting {
			return true
		}
	}
	return false
}

// footerAfterResume is what a paused draft ends with once its run ended
// in another draft.
func footerAfterResume(s core.RunStatus) string {
	switch s {
	case core.RunDone:
		return "✅ Done: the answer is below."
	case core.RunAwaitingApproval:
		return footerContinued // it waits again, below
	}
	if f := footerFor(s); f != "" {
		return f
	}
	return footerContinued
}

// restate edits a paused draft's messages to what it shows now. It only
// edits messages known to exist: the draft sits above the approval cards,
// and a new post would land below them.
func (s *Sender) restate(c *conv, d *draft) {
	s.mu.Lock()
	doc := d.compose()
	s.mu.Unlock()
	chunks := Split(doc, s.limits.MaxText)
	for i := range d.msgs {
		text := "…" // the draft got shorter
		if i < len(chunks) {
			text = chunks[i]
		}
		if !s.deliverChunk(c, d, i, Message{Text: text}, Urgent, urgentTries, false) {
			s.log.Warn("render: paused draft not updated", "conv", c.key, "run", d.run)
			return
		}
	}
}
