package core

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// ApprovalStatus is the state of an approval request. Every state but
// pending is final.
type ApprovalStatus string

// Approval states.
const (
	ApprovalPending    ApprovalStatus = "pending"
	ApprovalApproved   ApprovalStatus = "approved"
	ApprovalDenied     ApprovalStatus = "denied"
	ApprovalExpired    ApprovalStatus = "expired"
	ApprovalSuperseded ApprovalStatus = "superseded"
	ApprovalCancelled  ApprovalStatus = "cancelled"
)

// Approval is a request to run one tool call that needs a person's decision.
type Approval struct {
	// ID is random and unguessable (128 bits, hex): platforms carry it in
	// callback data and it is always looked up, never trusted by itself.
	ID      string `json:"id"`
	RunID   string `json:"run_id"`
	ConvKey string `json:"conv_key"`
	CallID  string `json:"call_id"`
	Toolset string `json:"toolset"`
	Tool    string `json:"tool"`
	// Arguments are the validated arguments, in canonical JSON.
	Arguments json.RawMessage `json:"arguments"`
	// ActionHash binds a decision to exactly this action; see ActionHash.
	ActionHash string         `json:"action_hash"`
	Risk       Risk           `json:"risk"`
	Requester  Actor          `json:"requester"`
	Status     ApprovalStatus `json:"status"`
	DecidedBy  Actor          `json:"decided_by,omitzero"`
	Reason     string         `json:"reason,omitempty"`
	CreatedAt  time.Time      `json:"created_at"`
	ExpiresAt  time.Time      `json:"expires_at"`
	DecidedAt  time.Time      `json:"decided_at,omitzero"`
	// Verdict is what the policy decided when the request was made: who
	// may decide it and how many must approve. Decisions are checked
	// against it, not against a policy reloaded since.
	Verdict Verdict `json:"verdict,omitzero"`
	// Votes are the decisions counted so far, one per person, oldest
	// first (see Engine.Decide); the store keeps them with the approval.
	Votes []Vote `json:"votes,omitempty"`
	// Preview is what the call would change (docs/design.md §18), nil
	// when its tool has none. It is stored with the approval and updated
	// when the preview arrives after the card was posted.
	Preview *Preview `json:"preview,omitempty"`
}

// Vote is one person's decision on an approval. A quorum counts distinct
// persons: the store refuses a second vote of the same person
// (ErrAlreadyVoted), whichever platform identity they used.
type Vote struct {
	// Person is Policy.Person of Actor.ID.
	Person  string    `json:"person"`
	Actor   Actor     `json:"actor"`
	Approve bool      `json:"approve"`
	Reason  string    `json:"reason,omitempty"`
	At      time.Time `json:"at"`
}

// Approvals counts the approving votes.
func (a Approval) Approvals() int {
	n := 0
	for _, v := range a.Votes {
		if v.Approve {
			n++
		}
	}
	return n
}

// Quorum is how many approvals a needs (at least 1).
func (a Approval) Quorum() int { return max(a.Verdict.Quorum, 1) }

// Decision is a person's answer to an approval request.
type Decision struct {
	ApprovalID string
	Actor      Actor
	Approve    bool
	Reason     string
	// ActionHash, when set, must equal the request's hash: a client that
	// showed the person an action can bind the click to what it showed.
	ActionHash string
}

// ActionHash returns the hex SHA-256 of the canonical JSON of
// {"arguments":…, "server":…, "tool":…}. Canonical JSON has object keys
// sorted, no insignificant white space and no HTML escaping, so the same
// action always has the same hash however the model formatted it.
func ActionHash(server, tool string, args json.RawMessage) (string, error) {
	canon, err := CanonicalJSON(args)
	if err != nil {
		return "", err
	}
	doc, err := CanonicalJSON(mustJSON(map[string]any{
		"server":    server,
		"tool":      tool,
		"arguments": json.RawMessage(canon),
	}))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(doc)
	return hex.EncodeToString(sum[:]), nil
}

// CanonicalJSON re-encodes a JSON document with sorted keys, numbers as
// written, and no HTML escaping. Empty input is treated as {}.
func CanonicalJSON(doc json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return json.RawMessage("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("canonical json: trailing data after the document")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
