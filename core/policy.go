package core

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Policy is the one decision point for approvals (docs/design.md §11): whether a
// tool call runs, needs approval or is refused, and who may decide it. The
// gate asks Classify for every call; every "may this person decide" check of
// the engine and the adapters asks MayDecide, whose Reason is also the text
// the person is shown, so what is enforced and what is said cannot disagree.
//
// A Policy only ever tightens the risk from the MCP annotations: Classify
// never returns ActionRead for a risk that needs approval. Implementations
// are immutable values, safe for concurrent use; a reload swaps the value
// (package policy keeps it behind an atomic pointer). DefaultPolicy is the
// behaviour without a policy file; package policy implements the file.
type Policy interface {
	// Classify decides what happens to a call. The verdict of an ask is
	// meant to be stored with the approval (Approval.Verdict), so that a
	// decision is checked against what applied when it was proposed.
	Classify(c PolicyCall) Verdict
	// MayDecide says whether who may approve or deny a, from a.Verdict (an
	// approval stored without one is classified again). When not, Reason is
	// the sentence to show them.
	MayDecide(a Approval, who Actor) Eligibility
	// Person folds an identity ("slack:U0ALICE") to the person it belongs
	// to ("alice"); an identity no person claims is itself. Quorums count
	// distinct persons.
	Person(identity string) string
}

// Action is what a policy decided for a call.
type Action string

// Actions. Read is only ever the answer for a read-risk call.
const (
	ActionRead Action = "read" // runs without approval
	ActionAsk  Action = "ask"  // runs once approved
	ActionDeny Action = "deny" // never runs; the model is told Verdict.Denial
)

// PolicyCall is a tool call as a policy sees it. Identities are
// "platform:id" ("slack:U0ALICE", "telegram:12345678", "terminal:alice",
// "api:alice", "schedule:morning-health"); adapters must pass them so.
type PolicyCall struct {
	Server    string          // the toolset (MCP server) name
	Tool      string          // the tool's name on its server (Tool.Remote)
	Arguments json.RawMessage // validated arguments
	Risk      Risk
	Requester Actor  // who asked; a schedule's runs are "schedule:<name>"
	ConvKey   string // the conversation, whose platform picks the default approvers
}

// PolicyCall returns the call an approval was made for.
func (a Approval) PolicyCall() PolicyCall {
	return PolicyCall{Server: a.Toolset, Tool: a.Tool, Arguments: a.Arguments, Risk: a.Risk, Requester: a.Requester, ConvKey: a.ConvKey}
}

// Verdict is a policy's decision on one call. It is a plain value, stored
// with the approval it created (JSON), so it survives restarts and reloads.
type Verdict struct {
	Action Action `json:"action"`
	// Rule names the rule that decided; empty means the defaults.
	Rule string `json:"rule,omitempty"`
	// Reason is the rule's reason, or why an ask cannot be approved.
	Reason string `json:"reason,omitempty"`
	// Approvers are who may decide as the policy names them (roles,
	// people, identities); empty when none are configured.
	Approvers []string `json:"approvers,omitempty"`
	// Eligible are the persons (see Policy.Person) who may decide, resolved
	// when the call was classified. The requester is among them only when
	// self-approval applies.
	Eligible []string `json:"eligible,omitempty"`
	// Quorum is how many distinct eligible persons must approve (>= 1).
	Quorum       int  `json:"quorum,omitempty"`
	SelfApproval bool `json:"self_approval,omitempty"`
	// Notify are further places ("telegram:12345678") that get the card.
	Notify []string `json:"notify,omitempty"`
	// Proposal marks a request a virtual tool proposed (a memory
	// promotion): nothing runs when it is approved; its tool acts on it.
	Proposal bool `json:"proposal,omitempty"`
}

// Eligibility is MayDecide's answer.
type Eligibility struct {
	Allowed bool
	// Reason, when not Allowed, says who may decide (and why not this
	// person) in one plain sentence: adapters show it as it is.
	Reason string
}

// Denial is the tool result a denied call gives the model.
func (v Verdict) Denial() string {
	s := "denied by policy"
	if v.Rule != "" {
		s += " rule " + v.Rule
	}
	if v.Reason != "" {
		s += ": " + v.Reason
	}
	return s
}

// AskVerdict completes the verdict of a call that needs approval: eligible
// (identities or persons, already folded by the policy) loses the requester
// unless self-approval applies, which it never does for a requester that is
// not a person; and a quorum that the remaining persons cannot reach makes
// the call a denial now rather than a request that can only expire.
func AskVerdict(v Verdict, eligible []string, requester string) Verdict {
	v.Action = ActionAsk
	if v.Quorum < 1 {
		v.Quorum = 1
	}
	if !IsPerson(requester) {
		v.SelfApproval = false
	}
	v.Eligible = nil
	seen := map[string]bool{}
	for _, p := range eligible {
		if p == "" || seen[p] || p == requester && !v.SelfApproval {
			continue
		}
		seen[p] = true
		v.Eligible = append(v.Eligible, p)
	}
	if len(v.Eligible) < v.Quorum {
		v.Action = ActionDeny
		v.Reason = unreachable(v)
	}
	return v
}

func unreachable(v Verdict) string {
	if len(v.Eligible) == 0 {
		return "nobody may approve this request (no approvers are configured for it)"
	}
	people := strconv.Itoa(len(v.Eligible)) + " people"
	if len(v.Eligible) == 1 {
		people = "1 person"
	}
	return "it needs " + strconv.Itoa(v.Quorum) + " approvals but only " + people + " may approve (" + joinNames(v.Eligible) + ")"
}

// Decide is the approver check behind every Policy's MayDecide: who and
// requester are persons (Policy.Person of the identities). It lives on the
// verdict so that the rule and the sentence explaining it are one piece.
func (v Verdict) Decide(requester Actor, requesterPerson, who string) Eligibility {
	if v.Action != ActionAsk {
		return Eligibility{Reason: "This request does not wait for a decision."}
	}
	if who != "" {
		for _, p := range v.Eligible {
			if p == who {
				return Eligibility{Allowed: true}
			}
		}
	}
	may := "Only " + v.Deciders(requester, requesterPerson) + " may decide this request."
	if who != "" && who == requesterPerson && !v.SelfApproval && IsPerson(requesterPerson) {
		where := "by default"
		if v.Rule != "" {
			where = "for rule " + v.Rule
		}
		return Eligibility{Reason: "You asked for this yourself and self-approval is off " + where + ". " + may}
	}
	return Eligibility{Reason: may}
}

// Deciders names who may decide, for cards and refusals: "the requester
// (@alice) or slack:U0BOB", "alice or bob (approvers: sre)".
func (v Verdict) Deciders(requester Actor, requesterPerson string) string {
	if len(v.Eligible) == 0 {
		return "nobody"
	}
	names := make([]string, len(v.Eligible))
	for i, p := range v.Eligible {
		names[i] = p
		if p == requesterPerson {
			names[i] = "the requester (" + requester.String() + ")"
		}
	}
	s := joinNames(names)
	if len(v.Approvers) > 0 && !sameSet(v.Approvers, v.Eligible) {
		s += " (approvers: " + strings.Join(v.Approvers, ", ") + ")"
	}
	return s
}

// IsPerson reports whether an identity is a person's: not empty, not a
// schedule's and not Alertmanager's (an incident's triage, docs/design.md
// §19). Self-approval never applies to anything else.
func IsPerson(identity string) bool {
	return identity != "" && !strings.HasPrefix(identity, "schedule:") && !strings.HasPrefix(identity, "alertmanager:")
}

// maxNames bounds how many names a sentence lists.
const maxNames = 8

// joinNames lists names as "a, b or c", at most maxNames of them.
func joinNames(names []string) string {
	more := 0
	if len(names) > maxNames {
		names, more = names[:maxNames], len(names)-maxNames
	}
	switch {
	case more > 0:
		return strings.Join(names, ", ") + " or " + strconv.Itoa(more) + " more"
	case len(names) == 1:
		return names[0]
	default:
		return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	in := map[string]bool{}
	for _, s := range a {
		in[s] = true
	}
	for _, s := range b {
		if !in[s] {
			return false
		}
	}
	return true
}
