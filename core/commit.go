package core

import (
	"context"
	"fmt"
)

// A run writes through a Batch per step rather than a call per write:
// every commit is durable (SQLite's synchronous=FULL pays an fsync for
// each), and a turn with one tool call used to make a dozen of them.
//
// Messages and audit entries are staged on the run and committed with the
// next write the run must make anyway. Nothing waits staged across a model
// call or a tool call's side effects: the staged tail is committed before
// the model is called (commitStaged in modelStep), an executed tool's audit
// entry is committed as soon as the tool's result is in the transcript
// (flush in gate), a pause commits everything with its checkpoint, and a
// run's last commit carries its end. The one thing that waits for a tool
// is the assistant message that asked for it, so that a crash while the
// tool runs leaves no unanswered call in the transcript.

// staged is what a run has decided but not stored yet.
type staged struct {
	msgs  []Message
	audit []AuditEntry
}

// stage adds msgs to the run's transcript, to be stored with its next
// commit.
func (e *Engine) stage(rs *runState, msgs ...Message) {
	for i := range msgs {
		msgs[i].RunID = rs.run.ID
		if msgs[i].Time.IsZero() {
			msgs[i].Time = e.now()
		}
	}
	rs.msgs = append(rs.msgs, msgs...)
	rs.staged.msgs = append(rs.staged.msgs, msgs...)
}

// stageAudit adds an audit entry to the run's next commit.
func (e *Engine) stageAudit(rs *runState, entry AuditEntry) {
	if entry.Time.IsZero() {
		entry.Time = e.now()
	}
	rs.staged.audit = append(rs.staged.audit, entry)
}

// commit stores the staged writes and b in one transaction. When it fails,
// the staged writes stay staged for the next commit; b's are the caller's
// to handle.
func (e *Engine) commit(ctx context.Context, rs *runState, b Batch) error {
	if st := rs.starting; st != nil {
		// Writes of a run follow its start (writeStart).
		if <-st.done; st.err != nil {
			return st.err
		}
	}
	b.ConvKey = rs.run.ConvKey
	b.Messages = append(rs.staged.msgs[:len(rs.staged.msgs):len(rs.staged.msgs)], b.Messages...)
	b.Audit = append(rs.staged.audit[:len(rs.staged.audit):len(rs.staged.audit)], b.Audit...)
	if err := e.store.Apply(ctx, b); err != nil {
		return fmt.Errorf("core: store: %w", err)
	}
	rs.staged = staged{}
	return nil
}

// flush commits what is staged, if anything; a failure is logged, and
// what was staged is tried again with the next commit.
func (e *Engine) flush(ctx context.Context, rs *runState) {
	if len(rs.staged.msgs) == 0 && len(rs.staged.audit) == 0 {
		return
	}
	if err := e.commit(ctx, rs, Batch{}); err != nil {
		e.log.Error("store run step", "run", rs.run.ID, "err", err)
	}
}
