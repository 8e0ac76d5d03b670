package core

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// VirtualTool is a tool the engine runs in-process (docs/design.md §4, §14):
// load_toolset and the memory tools. It needs no MCP round trip and never
// an approval card; whatever it must not do alone it proposes (Propose) for
// people to decide. Registered through Deps.Virtual; the engine's own
// load_toolset is one too.
type VirtualTool interface {
	// Schema is the tool as the model sees it. Its name wins over an MCP
	// tool of the same name, which is then not offered.
	Schema() ToolSchema
	// Toolset is "" for a tool offered in every conversation, or the
	// toolset that load_toolset loads it with ("memory").
	Toolset() string
	// Call runs the tool. Arguments are a JSON object; the tool decodes
	// and checks them itself and answers bad ones with an error result.
	Call(ctx context.Context, c VirtualCall) ToolResult
}

// Decider is a VirtualTool that proposes: Decided is called once, by the
// engine that settles a proposal of the tool (approved, denied or
// expired), and says what became of it (shown in the audit trail).
type Decider interface {
	Decided(ctx context.Context, a Approval) (string, error)
}

// VirtualCall is one call of a virtual tool in a run.
type VirtualCall struct {
	ConvKey   string
	RunID     string
	CallID    string
	Requester Actor
	Person    string // Requester folded by the policy
	Arguments json.RawMessage

	e    *Engine
	rs   *runState
	tool VirtualTool
}

// Emit shows an event (memory.search, memory.write.created, …) on the
// run's stream.
func (c VirtualCall) Emit(ev Event) { c.rs.out.emit(c.RunID, ev) }

// Proposal is something a virtual tool asks people to decide: it becomes an
// approval request with buttons, decided by the admins (see Admins) like
// any other approval, and handed to the tool's Decided.
type Proposal struct {
	// Arguments is what is decided, bound by the action hash.
	Arguments json.RawMessage
	// Event announces the proposal (its Approval is set by the engine).
	Event EventType
	// Expiry: default 24 hours.
	Expiry time.Duration
}

// ErrNoAdmins: a proposal nobody may decide (KindNotAllowed).
var ErrNoAdmins = NewKindError(KindNotAllowed, "nobody may decide it: no admins are configured (policy role admin, or the platform's approvers)")

// Propose records p as an approval request of this call, audits and
// announces it, and returns it. The run goes on; the decision comes later.
func (c VirtualCall) Propose(ctx context.Context, p Proposal) (Approval, error) {
	return c.e.propose(ctx, c, p)
}

// Admins is the optional Policy ability of naming who may decide
// proposals (promote memory) in a conversation: persons, as Person folds
// them. DefaultPolicy names the platform's approvers.
type Admins interface {
	Admins(convKey string) []string
}

// isAdmin reports whether the identity's person may decide proposals in
// the conversation.
func (e *Engine) isAdmin(convKey, identity string) bool {
	person := e.cfg.Policy.Person(identity)
	for _, p := range e.admins(convKey) {
		if p == person {
			return true
		}
	}
	return false
}

func (e *Engine) admins(convKey string) []string {
	if a, ok := e.cfg.Policy.(Admins); ok {
		return a.Admins(convKey)
	}
	return nil
}

func (e *Engine) propose(ctx context.Context, c VirtualCall, p Proposal) (Approval, error) {
	args, err := CanonicalJSON(p.Arguments)
	if err != nil {
		return Approval{}, err
	}
	name := c.tool.Schema().Name
	hash, err := ActionHash(c.tool.Toolset(), name, args)
	if err != nil {
		return Approval{}, err
	}
	if p.Expiry <= 0 {
		p.Expiry = 24 * time.Hour
	}
	v := AskVerdict(Verdict{Quorum: 1, SelfApproval: true, Approvers: []string{"admin"}}, e.admins(c.ConvKey), c.Person)
	if v.Action != ActionAsk {
		return Approval{}, ErrNoAdmins
	}
	v.Proposal = true
	now := e.now()
	a := Approval{
		ID: newID(), RunID: c.RunID, ConvKey: c.ConvKey, CallID: c.CallID,
		Toolset: c.tool.Toolset(), Tool: name, Arguments: args, ActionHash: hash, Risk: RiskWrite,
		Requester: c.Requester, Status: ApprovalPending, CreatedAt: now, ExpiresAt: now.Add(p.Expiry), Verdict: v,
	}
	entry := AuditEntry{Time: now, Kind: AuditProposed, ConvKey: a.ConvKey, RunID: a.RunID, ApprovalID: a.ID,
		Actor: a.Requester, Toolset: a.Toolset, Tool: a.Tool, ActionHash: a.ActionHash, Risk: a.Risk}
	if err := e.store.Apply(context.WithoutCancel(ctx), Batch{Approvals: []Approval{a}, Audit: []AuditEntry{entry}}); err != nil {
		return Approval{}, fmt.Errorf("core: record proposal: %w", err)
	}
	if p.Event != "" {
		info := CallInfo{ID: a.CallID, Name: a.Tool, Toolset: a.Toolset, Arguments: a.Arguments, Risk: a.Risk, RequiresApproval: true}
		c.Emit(Event{Type: p.Event, Call: &info, Approval: &a})
	}
	return a, nil
}

// decider returns the virtual tool that proposed a, if it did.
func (e *Engine) decider(a Approval) Decider {
	vt, ok := e.virtual[a.Tool]
	if !ok || vt.Toolset() != a.Toolset {
		return nil
	}
	d, _ := vt.(Decider)
	return d
}

// runVirtual runs an in-process call.
func (e *Engine) runVirtual(ctx context.Context, rs *runState, pc PendingCall) ToolResult {
	vt, ok := e.virtual[pc.Call.Name]
	if !ok {
		return ToolResult{IsError: true, Content: fmt.Sprintf("unknown tool %q; nothing was run", pc.Call.Name)}
	}
	return vt.Call(ctx, VirtualCall{
		ConvKey: rs.run.ConvKey, RunID: rs.run.ID, CallID: pc.Call.ID, Requester: rs.run.Requester,
		Person: e.cfg.Policy.Person(rs.run.Requester.ID), Arguments: orEmptyObject(pc.Call.Arguments),
		e: e, rs: rs, tool: vt,
	})
}

// virtualToolsets are the toolsets only virtual tools make up.
func (e *Engine) virtualToolsets() []string {
	var names []string
	seen := map[string]bool{}
	for _, vt := range e.virtualOrder {
		if ts := vt.Toolset(); ts != "" && !seen[ts] {
			seen[ts] = true
			names = append(names, ts)
		}
	}
	return names
}
