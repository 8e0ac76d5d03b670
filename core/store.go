package core

import (
	"context"
	"time"
)

// Store is all durable state of opsgate. memory/sqlite and memory/postgres
// implement it and pass the conformance suite in core/coretest. Every method
// is safe for concurrent use, also by several processes over one database.
type Store interface {
	ConversationStore
	RunStore
	ApprovalStore
	AuditLog
	EventLog
	// Apply makes the writes of b in one transaction: all of them or none.
	// An empty batch is a no-op.
	Apply(ctx context.Context, b Batch) error
	Close() error
}

// Batch is a group of writes that Store.Apply makes atomically, in the
// order of the fields. It is the only way to write to a store besides
// SaveInbound and the decisions on approvals (DecideApproval, AddVote), so a
// store implements each kind of write once. The engine commits what one
// step of a run decided as one batch (the assistant message that asked for
// a tool, the tool's result and its audit entry), because each commit is a
// durable write (an fsync or a round trip) and a turn would otherwise pay
// for a dozen.
type Batch struct {
	// Conversation replaces the mutable state (Title, Toolsets) of
	// Conversation.Key, creating it when missing (with its CreatedAt, or
	// now when zero).
	Conversation *Conversation
	// CreateRun stores a new run; an existing id fails the batch.
	CreateRun *Run
	// ConvKey is the conversation Messages are appended to.
	ConvKey string
	// Messages are appended to the transcript of ConvKey, in order.
	Messages []Message
	// InboundDone marks saved messages (ConvKey, MessageID) handled: their
	// run started, they steered a run, or a stop dropped them. Unknown ids
	// are ignored.
	InboundDone []Inbound
	// Approvals are created in order; an existing id fails the batch.
	Approvals []Approval
	// Previews replace the previews of existing approvals (whatever their
	// status: a preview may arrive after the decision).
	Previews []ApprovalPreview
	// Checkpoint stores (or replaces) the checkpoint of a paused run.
	Checkpoint *Checkpoint
	// Audit is appended to the audit log in order; the store assigns IDs
	// and chains the hashes.
	Audit []AuditEntry
	// UpdateRun replaces the run's mutable fields (status, counters, usage,
	// error, end time); a missing run fails the batch with ErrNotFound.
	UpdateRun *Run
	// Seq reserves event sequence numbers with the batch's other writes, as
	// RunStore.ReserveSeq would: a run's first block of numbers comes with
	// its start, not from a store call of its own before its first event.
	Seq *SeqBlock
}

// SeqBlock is a reservation of N event sequence numbers of ConvKey in a
// Batch; the store sets Last, the last number reserved, once the batch is
// applied.
type SeqBlock struct {
	ConvKey string
	N       int64
	Last    int64
}

// Empty reports whether b writes nothing.
func (b Batch) Empty() bool {
	return b.Conversation == nil && b.CreateRun == nil && len(b.Messages) == 0 && len(b.InboundDone) == 0 &&
		len(b.Approvals) == 0 && len(b.Previews) == 0 && b.Checkpoint == nil && len(b.Audit) == 0 && b.UpdateRun == nil && b.Seq == nil
}

// EventLog keeps the events of conversations as people were shown them,
// so that a stream that reconnects gets what it missed ([Engine.Events]).
type EventLog interface {
	// AppendEvents stores events; one already stored (the same ConvKey and
	// Seq) is left as it is.
	AppendEvents(ctx context.Context, evs []Event) error
	// Events returns the stored events q selects, in Seq order.
	Events(ctx context.Context, q EventQuery) ([]Event, error)
	// PruneEvents deletes the events older than before and reports how many.
	PruneEvents(ctx context.Context, before time.Time) (int64, error)
}

// EventQuery selects a conversation's stored events.
type EventQuery struct {
	ConvKey string
	// After keeps the events whose Seq is above it.
	After int64
	// RunID, when set, keeps that run's events only.
	RunID string
	// Limit is the most to return; 0 is no limit.
	Limit int
	// Latest returns only the last event selected (the highest Seq).
	Latest bool
}

// ConversationStore keeps conversations, their transcripts and the inbound
// message log.
type ConversationStore interface {
	// SaveInbound stores an inbound message before it is processed. It reports
	// first=false, and stores nothing, when a message with the same
	// (ConvKey, MessageID) was saved before; an empty MessageID never dedupes.
	SaveInbound(ctx context.Context, in Inbound) (first bool, err error)
	// PendingInbound returns saved messages not marked done, oldest first:
	// what a crash interrupted between storing and handling.
	PendingInbound(ctx context.Context) ([]Inbound, error)
	// Conversation returns the conversation, creating it when missing.
	Conversation(ctx context.Context, key string) (Conversation, error)
	// Messages returns the transcript, oldest first.
	Messages(ctx context.Context, key string) ([]Message, error)
	// Conversations returns the conversations f selects, the most recently
	// active first (see Conversation.UpdatedAt); two conversations are never
	// equally recent, so the order is total.
	Conversations(ctx context.Context, f ConversationFilter) ([]Conversation, error)
}

// ConversationFilter selects conversations; the zero value selects all.
type ConversationFilter struct {
	// KeyPrefix keeps the keys that start with it, byte for byte.
	KeyPrefix string
	// Limit is the most to return; 0 is no limit.
	Limit int
}

// RunStore keeps runs and the checkpoints of paused runs.
type RunStore interface {
	Run(ctx context.Context, id string) (Run, error)
	// ReserveSeq reserves n event sequence numbers of a conversation,
	// across every process sharing the store, and returns the last: the
	// caller owns (last-n, last]. A conversation's first reservation starts
	// at 1 (or above the numbers its runs used before numbers were kept per
	// conversation).
	ReserveSeq(ctx context.Context, convKey string, n int64) (last int64, err error)
	// UnfinishedRuns returns the runs whose status is still running,
	// oldest first: those nobody runs any more were interrupted (their
	// process died) and are recovered (Engine.Recover, replicas' sweeps).
	UnfinishedRuns(ctx context.Context) ([]Run, error)
	Checkpoint(ctx context.Context, runID string) (Checkpoint, error)
	// ClaimCheckpoint atomically deletes and returns the checkpoint, so that
	// exactly one process resumes a run; ErrNotFound when already claimed.
	ClaimCheckpoint(ctx context.Context, runID string) (Checkpoint, error)
	// Checkpoints returns the checkpoints of a conversation (at most one is
	// expected), oldest first; of every conversation when convKey is "".
	Checkpoints(ctx context.Context, convKey string) ([]Checkpoint, error)
}

// ApprovalStore keeps approval requests and their decisions.
type ApprovalStore interface {
	Approval(ctx context.Context, id string) (Approval, error)
	// Approvals returns a run's approvals in creation order.
	Approvals(ctx context.Context, runID string) ([]Approval, error)
	// DecideApproval moves a pending approval to a final status (d.Status,
	// d.DecidedBy, d.Reason, d.DecidedAt) atomically. When the approval is no
	// longer pending it returns the stored approval and ErrAlreadyDecided.
	DecideApproval(ctx context.Context, id string, d ApprovalOutcome) (Approval, error)
	// AddVote records v on a pending approval atomically and returns the
	// approval with all its votes. A person votes once: a second vote of
	// v.Person gives the stored approval and ErrAlreadyVoted; a decided
	// approval gives it and ErrAlreadyDecided.
	AddVote(ctx context.Context, id string, v Vote) (Approval, error)
	// ExpiredApprovals returns pending approvals whose ExpiresAt is before now.
	ExpiredApprovals(ctx context.Context, now time.Time) ([]Approval, error)
}

// PendingSummary describes the approvals waiting for a decision. The
// engine does not need it: metrics do (both stores count them, and
// reading the count from the store keeps it right across restarts and
// replicas), and own the interface that asks for it.
type PendingSummary struct {
	Count int
	// Oldest is the CreatedAt of the oldest pending approval; zero when
	// Count is 0.
	Oldest time.Time
}

// ApprovalOutcome is the final state written by DecideApproval.
type ApprovalOutcome struct {
	Status    ApprovalStatus
	DecidedBy Actor
	Reason    string
	DecidedAt time.Time
}

// AuditLog is the append-only record of what was proposed, who decided and
// what ran. There is no way to change or delete an entry. Each entry is
// chained to the one before it (AuditEntry.ChainHash), so that an entry
// edited, deleted or reordered with the database's own tools is detected
// (VerifyChain); appends are serialised so that no two share a predecessor.
type AuditLog interface {
	// Audit returns the entries matching f, oldest first.
	Audit(ctx context.Context, f AuditFilter) ([]AuditEntry, error)
}

// AuditFilter selects audit entries; empty fields match everything.
type AuditFilter struct {
	ConvKey    string
	RunID      string
	ApprovalID string
	// Since, when set, keeps entries at or after it.
	Since time.Time
}

// Audit kinds.
const (
	AuditProposed   = "proposed"         // an approval was requested
	AuditApproved   = "approved"         // decided: approve
	AuditDenied     = "denied"           // decided: deny
	AuditExpired    = "expired"          // expired without a decision
	AuditSuperseded = "superseded"       // a new message replaced the request
	AuditCancelled  = "cancelled"        // /stop cancelled the request
	AuditRefused    = "refused"          // someone not allowed tried to decide, or the model called a tool it was not given
	AuditMismatch   = "mismatch"         // hash check failed right before execution
	AuditExecuted   = "executed"         // a tool ran (read or approved) and returned
	AuditFailed     = "failed"           // a tool ran and failed
	AuditVote       = "vote"             // an approval counted towards a quorum that is not reached yet
	AuditPolicy     = "denied_by_policy" // a policy rule denied the call; it never ran
	AuditStale      = "stale"            // approved, but what its preview showed changed before it ran; asked again
)

// AuditEntry is one line of the audit log.
type AuditEntry struct {
	ID         int64         `json:"id"` // assigned by the store
	Time       time.Time     `json:"time"`
	Kind       string        `json:"kind"`
	ConvKey    string        `json:"conv_key"`
	RunID      string        `json:"run_id"`
	ApprovalID string        `json:"approval_id,omitempty"`
	Actor      Actor         `json:"actor,omitzero"`
	Toolset    string        `json:"toolset,omitempty"`
	Tool       string        `json:"tool,omitempty"`
	ActionHash string        `json:"action_hash,omitempty"`
	Risk       Risk          `json:"risk,omitempty"`
	Duration   time.Duration `json:"duration,omitempty"`
	Detail     string        `json:"detail,omitempty"`
	// RiskSource is where Risk came from (the server's annotations, a
	// configured override, or the default), for entries of tool calls
	// made since it is recorded; "" in older entries. Stores keep it with
	// Risk (see StoredRisk).
	RiskSource RiskSource `json:"risk_source,omitempty"`
	// PrevHash and Hash chain the log (see ChainHash); the store sets them
	// when it appends.
	PrevHash string `json:"prev_hash,omitempty"`
	Hash     string `json:"hash,omitempty"`
}

// Conversation is the durable state of one conversation.
type Conversation struct {
	Key       string    `json:"key"`
	Title     string    `json:"title,omitempty"`
	Toolsets  []Toolset `json:"toolsets"`
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is the last activity: creation, a stored inbound message or
	// appended messages. The store keeps it (UpdateConversation ignores it
	// and is no activity: it changes state, nobody spoke) and makes it
	// strictly increase across all conversations.
	UpdatedAt time.Time `json:"updated_at"`
}

// Toolset is a toolset loaded into a conversation.
type Toolset struct {
	Name string `json:"name"`
	// Write: the write tools are loaded too (load_toolset include_write_tools).
	Write bool `json:"write,omitempty"`
}

// RunStatus is the state of a run.
type RunStatus string

// Run states; all but running are what `completed` reports.
const (
	RunRunning          RunStatus = "running"
	RunDone             RunStatus = "done"
	RunStopped          RunStatus = "stopped"
	RunAwaitingApproval RunStatus = "awaiting_approval"
	RunError            RunStatus = "error"
	RunMaxIterations    RunStatus = "max_iterations"
)

// Run is one user turn, possibly paused for approval and resumed.
type Run struct {
	ID        string    `json:"id"`
	ConvKey   string    `json:"conv_key"`
	Requester Actor     `json:"requester"`
	Status    RunStatus `json:"status"`
	// Iterations counts model calls.
	Iterations int `json:"iterations"`
	// TTFT is the time from the first model request to its first token.
	TTFT time.Duration `json:"ttft"`
	// Duration is the wall time the run was active (pauses excluded).
	Duration  time.Duration `json:"duration"`
	Usage     Usage         `json:"usage"`
	Error     string        `json:"error,omitempty"`
	StartedAt time.Time     `json:"started_at"`
	EndedAt   time.Time     `json:"ended_at,omitzero"`
}

// Checkpoint is everything needed to resume a run paused for approval, by
// any opsgate process. The transcript up to the pause is in the
// conversation's messages (the assistant message with the tool calls and the
// results that completed before the pause).
type Checkpoint struct {
	RunID     string `json:"run_id"`
	ConvKey   string `json:"conv_key"`
	Requester Actor  `json:"requester"`
	// Pending are the calls of the batch without a result, in source order.
	Pending   []PendingCall `json:"pending"`
	Toolsets  []Toolset     `json:"toolsets"`
	Iteration int           `json:"iteration"`
	// Seq is about the last event sequence number of the run when it paused
	// (for inspection; the store's ReserveSeq numbers the events).
	Seq       int64     `json:"seq"`
	CreatedAt time.Time `json:"created_at"`
}

// PendingCall is a tool call waiting in a paused batch.
type PendingCall struct {
	Call ToolCall `json:"call"`
	Tool Tool     `json:"tool"`
	// ApprovalID is set for calls that need approval.
	ApprovalID string `json:"approval_id,omitempty"`
	// Result is set for calls answered without running (invalid arguments,
	// unknown tool, denied by policy): they are answered in order on resume.
	Result *ToolResult `json:"result,omitempty"`
	// Verdict is the policy's decision on the call, made once when the
	// batch was resolved. Empty in checkpoints written before policies:
	// then the tool's risk decides, as it did.
	Verdict Verdict `json:"verdict,omitzero"`
}

// inProcess reports whether the engine runs the call itself. A checkpoint
// written before virtual tools were marked has load_toolset without the
// mark.
func (pc PendingCall) inProcess() bool {
	return pc.Tool.InProcess || pc.Tool.Name == LoadToolsetTool && pc.Tool.Toolset == "" && pc.Tool.Remote == LoadToolsetTool
}

// asks reports whether the call waits for an approval before it runs.
func (pc PendingCall) asks() bool {
	if pc.Result != nil || pc.inProcess() {
		return false
	}
	if pc.Verdict.Action == "" {
		return pc.Tool.Risk.NeedsApproval()
	}
	return pc.Verdict.Action != ActionRead
}
