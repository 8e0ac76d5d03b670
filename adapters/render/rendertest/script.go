package rendertest

import (
	"encoding/json"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Script builds the events of one run, numbered in order, as the engine
// would send them.
type Script struct {
	Conv, Run string
	seq       int64
}

// NewScript starts a run of conv.
func NewScript(conv, run string) *Script { return &Script{Conv: conv, Run: run} }

// Event returns the next event of type t.
func (s *Script) Event(t core.EventType) core.Event {
	s.seq++
	return core.Event{Type: t, ConvKey: s.Conv, RunID: s.Run, Seq: s.seq, Time: time.Now()}
}

// Text returns an event of type t carrying text.
func (s *Script) Text(t core.EventType, text string) core.Event {
	ev := s.Event(t)
	ev.Text = text
	return ev
}

// Tool returns a tool event for a call of name with args (JSON).
func (s *Script) Tool(t core.EventType, id, name, args string) core.Event {
	ev := s.Event(t)
	ev.Call = &core.CallInfo{ID: id, Name: name, Arguments: json.RawMessage(args)}
	if t == core.EventToolResult || t == core.EventToolError {
		ev.Duration = 400 * time.Millisecond
	}
	return ev
}

// Approval returns an approval event (awaiting, approved or denied) for a.
func (s *Script) Approval(t core.EventType, a core.Approval) core.Event {
	ev := s.Event(t)
	ev.Approval = &a
	ev.Call = &core.CallInfo{ID: a.CallID, Name: a.Tool, Toolset: a.Toolset, Arguments: a.Arguments, Risk: a.Risk, RequiresApproval: true}
	return ev
}

// Completed returns the last event of a run.
func (s *Script) Completed(status core.RunStatus, text string) core.Event {
	ev := s.Text(core.EventCompleted, text)
	ev.Status = status
	return ev
}

// Tokens splits text into events of about n bytes each.
func (s *Script) Tokens(text string, n int) []core.Event {
	var evs []core.Event
	r := []rune(text)
	for len(r) > 0 {
		k := min(n, len(r))
		evs = append(evs, s.Text(core.EventToken, string(r[:k])))
		r = r[k:]
	}
	return evs
}

// NewApproval returns a pending approval request of conv for a write tool.
func NewApproval(conv, run, id string) core.Approval {
	now := time.Now()
	return core.Approval{
		ID: id, RunID: run, ConvKey: conv, CallID: "call-" + id[:4],
		Toolset: "k8s", Tool: "scale_deployment",
		Arguments:  json.RawMessage(`{"name":"web","namespace":"prod","replicas":3}`),
		ActionHash: "3f1c2a9b8d7e6f50aa11bb22cc33dd44ee55ff6677889900aabbccddeeff0011",
		Risk:       core.RiskWrite, Requester: core.Actor{ID: "u-alice", Name: "@alice"},
		Status: core.ApprovalPending, CreatedAt: now, ExpiresAt: now.Add(30 * time.Minute),
	}
}
