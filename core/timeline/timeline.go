// Package timeline derives what happened in a conversation, step by step
// with UTC times and actors, from what opsgate already keeps: its messages,
// runs and audit entries, and an incident's record of its alerts
// (docs/design.md §19). It stores nothing of its own. The same timeline
// is printed by `opsgate incident report`, answered by
// GET /api/v1/conversations/{key}/timeline, shortened for /timeline in
// chat, and given to the model to draft a postmortem.
package timeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Source is what a timeline is derived from; both stores implement it.
type Source interface {
	Messages(ctx context.Context, key string) ([]core.Message, error)
	// ConversationRuns returns the runs of a conversation, oldest first.
	ConversationRuns(ctx context.Context, convKey string) ([]core.Run, error)
	Audit(ctx context.Context, f core.AuditFilter) ([]core.AuditEntry, error)
}

// Alerts is an optional ability of a Source: the alerts of an incident
// conversation as its alert intake keeps them (core/incident's records),
// each firing and resolving in the order they came; none for a
// conversation that is no incident.
type Alerts interface {
	AlertChanges(ctx context.Context, convKey string) ([]AlertChange, error)
}

// ApprovalReader is an optional ability of a Source (both stores have
// it): an approval by id, for whom a request asked and what its preview
// showed.
type ApprovalReader interface {
	Approval(ctx context.Context, id string) (core.Approval, error)
}

// AlertChange is an alert that fired (At is its startsAt) or resolved
// (At is its endsAt); Received is when opsgate learnt it.
type AlertChange struct {
	Resolved bool
	// Name is the alertname label, Severity the severity label, Summary
	// the summary (else description) annotation.
	Name, Severity, Summary string
	// Fingerprint tells alerts of the same name apart.
	Fingerprint string
	// Receiver is the Alertmanager receiver that delivered it.
	Receiver string
	At       time.Time
	Received time.Time
}

// Records are what a timeline is derived from, read.
type Records struct {
	Messages []core.Message
	Runs     []core.Run
	Audit    []core.AuditEntry
	Alerts   []AlertChange
}

// Kind is what a step records. The names are part of the JSON format.
type Kind string

// The kinds of steps.
const (
	AlertFired      Kind = "alert.fired"
	AlertResolved   Kind = "alert.resolved"
	Message         Kind = "message"          // a person (or an alert intake, a schedule) wrote
	Answer          Kind = "answer"           // opsgate answered
	ToolCall        Kind = "tool.call"        // a tool ran (read, or approved)
	ApprovalAsked   Kind = "approval.asked"   // a card asked for a decision
	ApprovalVoted   Kind = "approval.voted"   // one vote towards a quorum
	ApprovalDecided Kind = "approval.decided" // approved, denied, expired, superseded, cancelled
	Refused         Kind = "refused"          // someone not allowed tried to decide, or policy denied a call
	Preview         Kind = "preview"          // what an approval's preview saw
	Stop            Kind = "stop"             // a run was stopped
	Error           Kind = "error"            // a run failed
)

// firstLineMax is how much of a message's first line a step keeps.
const firstLineMax = 120

// opsgateActor names opsgate's own steps.
const opsgateActor = "opsgate"

// Step is one thing that happened.
type Step struct {
	Time  time.Time `json:"time"`
	Kind  Kind      `json:"kind"`
	Actor string    `json:"actor"`
	// Text is one line saying what happened.
	Text    string `json:"text"`
	RunID   string `json:"run_id,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Risk    string `json:"risk,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	// DurationMS: a tool call's duration, present on every tool.call
	// (0 for one under a millisecond).
	DurationMS *int64 `json:"duration_ms,omitempty"`
	ApprovalID string `json:"approval_id,omitempty"`
	// Alert: alert.fired and alert.resolved.
	Alert *Alert `json:"alert,omitempty"`

	order int // the source's order among steps at the same time
}

// Alert is an alert step's alert: when it started (or ended) by
// Alertmanager's clock, and when opsgate received it.
type Alert struct {
	Name       string    `json:"name"`
	Severity   string    `json:"severity,omitempty"`
	Summary    string    `json:"summary,omitempty"`
	StartsAt   time.Time `json:"starts_at,omitzero"`
	EndsAt     time.Time `json:"ends_at,omitzero"`
	ReceivedAt time.Time `json:"received_at"`
}

// Change is a write that ran: what changed, and on whose approval.
type Change struct {
	Time       time.Time `json:"time"`
	Tool       string    `json:"tool"`
	Risk       string    `json:"risk"`
	Outcome    string    `json:"outcome"`
	ApprovedBy []string  `json:"approved_by,omitempty"`
	ApprovalID string    `json:"approval_id,omitempty"`
}

// Approvals counts the decisions asked for, by outcome.
type Approvals struct {
	Asked    int `json:"asked"`
	Approved int `json:"approved"`
	Denied   int `json:"denied"`
	// Other: expired, superseded, cancelled, or still pending.
	Other int `json:"other"`
}

// Timeline is a conversation's steps under a header.
type Timeline struct {
	ConvKey    string    `json:"conversation"`
	Title      string    `json:"title,omitempty"`
	Start      time.Time `json:"start,omitzero"`
	End        time.Time `json:"end,omitzero"`
	DurationMS int64     `json:"duration_ms"`
	// People are the persons who wrote, voted or decided, in the order
	// they first acted.
	People    []string  `json:"people"`
	Changes   []Change  `json:"changes"`
	Approvals Approvals `json:"approvals"`
	Steps     []Step    `json:"steps"`
}

// Duration is the time from the first step to the last.
func (t Timeline) Duration() time.Duration { return time.Duration(t.DurationMS) * time.Millisecond }

// ErrEmpty is the timeline of a conversation with nothing in it: the key
// names no conversation opsgate kept anything of.
var ErrEmpty = errors.New("nothing recorded")

// Build derives the timeline of conversation key, titled title.
func Build(ctx context.Context, src Source, key, title string) (Timeline, error) {
	var r Records
	var err error
	if r.Messages, err = src.Messages(ctx, key); err != nil {
		return Timeline{}, fmt.Errorf("timeline: messages: %w", err)
	}
	if r.Runs, err = src.ConversationRuns(ctx, key); err != nil {
		return Timeline{}, fmt.Errorf("timeline: runs: %w", err)
	}
	if r.Audit, err = src.Audit(ctx, core.AuditFilter{ConvKey: key}); err != nil {
		return Timeline{}, fmt.Errorf("timeline: audit: %w", err)
	}
	if al, ok := src.(Alerts); ok {
		if r.Alerts, err = al.AlertChanges(ctx, key); err != nil {
			return Timeline{}, fmt.Errorf("timeline: alerts: %w", err)
		}
	}
	t := FromRecords(key, title, r)
	if ap, ok := src.(ApprovalReader); ok {
		if t, err = withApprovals(ctx, ap, t); err != nil {
			return t, err
		}
	}
	if len(t.Steps) == 0 {
		return t, ErrEmpty
	}
	return t, nil
}

// FromRecords derives a timeline from records already read.
func FromRecords(key, title string, r Records) Timeline {
	b := builder{runs: map[string]core.Run{}}
	for _, run := range r.Runs {
		b.runs[run.ID] = run
	}
	b.alerts(r.Alerts)
	b.messages(r.Messages)
	b.audit(r.Audit)
	b.runEnds(r.Runs)
	t := Timeline{ConvKey: key, Title: title, Steps: b.steps}
	slices.SortStableFunc(t.Steps, func(x, y Step) int {
		return cmp.Or(x.Time.Compare(y.Time), cmp.Compare(x.order, y.order))
	})
	if t.Steps == nil {
		t.Steps = []Step{}
	}
	for i := range t.Steps {
		t.Steps[i].order = 0
	}
	if n := len(t.Steps); n > 0 {
		t.Start, t.End = t.Steps[0].Time, t.Steps[n-1].Time
		t.DurationMS = t.End.Sub(t.Start).Milliseconds()
	}
	t.People = b.people
	if t.People == nil {
		t.People = []string{}
	}
	t.Changes = b.changes
	if t.Changes == nil {
		t.Changes = []Change{}
	}
	t.Approvals = b.approvals
	return t
}

type builder struct {
	runs      map[string]core.Run
	steps     []Step
	people    []string
	changes   []Change
	approvals Approvals
	// approvers are the persons who approved an approval, by its id.
	approvers map[string][]string
	// stoppedBy is who cancelled a run's approvals by stopping it, by run.
	stoppedBy map[string]core.Actor
}

func (b *builder) add(s Step) {
	s.Time = s.Time.UTC()
	s.order = len(b.steps)
	b.steps = append(b.steps, s)
}

// person notes an actor who is a person: not opsgate, not an alert
// intake or a schedule acting on its own.
func (b *builder) person(a core.Actor) {
	name := a.String()
	if name == "" || a.ID == core.SystemActor.ID || automated(a.ID) || slices.Contains(b.people, name) {
		return
	}
	b.people = append(b.people, name)
}

// automated reports whether an actor id is opsgate acting by itself.
func automated(id string) bool {
	for _, p := range []string{"alertmanager:", "schedule:"} {
		if strings.HasPrefix(id, p) {
			return true
		}
	}
	return false
}

func (b *builder) alerts(changes []AlertChange) {
	started := map[string]time.Time{} // by name and fingerprint
	for _, c := range changes {
		al := &Alert{Name: c.Name, Severity: c.Severity, Summary: FirstLine(c.Summary), ReceivedAt: c.Received.UTC()}
		// As core/incident names the requester of its triage runs.
		actor := "Alertmanager"
		if c.Receiver != "" {
			actor += " " + c.Receiver
		}
		what := c.Name
		if c.Severity != "" {
			what += " (" + c.Severity + ")"
		}
		s := Step{Kind: AlertFired, Actor: actor, Alert: al, Time: cmp.Or(c.At, c.Received), Text: "fired: " + what}
		id := c.Name + "\x00" + c.Fingerprint
		al.StartsAt = utc(c.At)
		if c.Resolved {
			s.Kind, s.Text = AlertResolved, "resolved: "+what
			al.StartsAt, al.EndsAt = started[id], utc(c.At)
		} else {
			started[id] = al.StartsAt
		}
		if al.Summary != "" {
			s.Text += ": " + al.Summary
		}
		b.add(s)
	}
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

func (b *builder) messages(msgs []core.Message) {
	for _, m := range msgs {
		line := FirstLine(m.Content)
		switch {
		case m.Role == core.RoleUser && line != "":
			// A run's own message is its requester's; a steering message
			// names its author.
			r := b.runs[m.RunID]
			who := r.Requester
			if m.Name != "" && m.Name != who.String() {
				who = core.Actor{Name: m.Name}
			}
			b.person(who)
			b.add(Step{Time: cmp.Or(m.Time, r.StartedAt), Kind: Message, Actor: cmp.Or(who.String(), "unknown"), Text: line, RunID: m.RunID})
		case m.Role == core.RoleAssistant && len(m.ToolCalls) == 0 && line != "":
			b.add(Step{Time: m.Time, Kind: Answer, Actor: opsgateActor, Text: line, RunID: m.RunID})
		}
	}
}

func (b *builder) audit(entries []core.AuditEntry) {
	b.approvers, b.stoppedBy = map[string][]string{}, map[string]core.Actor{}
	for _, e := range entries {
		tool := e.Tool
		if e.Toolset != "" {
			tool = e.Toolset + "/" + e.Tool
		}
		s := Step{Time: e.Time, Actor: e.Actor.String(), RunID: e.RunID, Tool: tool, Risk: string(e.Risk), ApprovalID: e.ApprovalID}
		switch e.Kind {
		case core.AuditProposed:
			b.approvals.Asked++
			b.approvals.Other++ // until decided
			s.Kind, s.Text = ApprovalAsked, fmt.Sprintf("asked to approve %s (%s)", tool, e.Risk)
		case core.AuditVote:
			b.person(e.Actor)
			b.approvers[e.ApprovalID] = appendNew(b.approvers[e.ApprovalID], e.Actor.String())
			s.Kind, s.Outcome, s.Text = ApprovalVoted, "approve", "voted to approve "+tool
		case core.AuditApproved, core.AuditDenied, core.AuditExpired, core.AuditSuperseded, core.AuditCancelled:
			b.decided(e.Kind)
			s.Kind, s.Outcome = ApprovalDecided, e.Kind
			s.Text = e.Kind + " " + tool
			if e.Kind == core.AuditApproved || e.Kind == core.AuditDenied {
				b.person(e.Actor)
				s.Text += " by " + s.Actor
			}
			if e.Kind == core.AuditApproved {
				b.approvers[e.ApprovalID] = appendNew(b.approvers[e.ApprovalID], e.Actor.String())
			}
			if e.Kind == core.AuditCancelled && e.Actor.String() != "" {
				b.stoppedBy[e.RunID] = e.Actor
			}
			if e.Detail != "" {
				s.Text += ": " + FirstLine(e.Detail)
			}
		case core.AuditExecuted, core.AuditFailed, core.AuditOutcomeUnknown:
			ms := e.Duration.Milliseconds()
			s.Kind, s.DurationMS = ToolCall, &ms
			s.Time = e.Time.Add(-e.Duration) // when it started
			s.Outcome = map[string]string{core.AuditExecuted: "ok", core.AuditFailed: "failed", core.AuditOutcomeUnknown: "unknown"}[e.Kind]
			s.Text = fmt.Sprintf("%s (%s) %s in %s", tool, e.Risk, s.Outcome, human(e.Duration))
			if e.Detail != "" && e.Kind != core.AuditExecuted {
				s.Text += ": " + FirstLine(e.Detail)
			}
			if e.ApprovalID != "" && e.Risk != core.RiskRead {
				b.changes = append(b.changes, Change{Time: s.Time.UTC(), Tool: tool, Risk: string(e.Risk), Outcome: s.Outcome,
					ApprovedBy: b.approvers[e.ApprovalID], ApprovalID: e.ApprovalID})
			}
		case core.AuditRefused, core.AuditMismatch, core.AuditPolicy:
			if e.Kind == core.AuditRefused {
				b.person(e.Actor)
			}
			s.Kind, s.Outcome = Refused, e.Kind
			s.Text = e.Kind + " " + tool
			if e.Detail != "" {
				s.Text += ": " + FirstLine(e.Detail)
			}
		default:
			if strings.Contains(e.Kind, "preview") {
				s.Kind, s.Text = Preview, "preview of "+tool
				if e.Detail != "" {
					s.Text += ": " + FirstLine(e.Detail)
				}
				break
			}
			continue
		}
		if s.Actor == "" {
			s.Actor = opsgateActor
		}
		b.add(s)
	}
}

// withApprovals says whom each request asked, and puts after it what its
// preview showed.
func withApprovals(ctx context.Context, ap ApprovalReader, t Timeline) (Timeline, error) {
	var steps []Step
	for _, s := range t.Steps {
		if s.Kind != ApprovalAsked || s.ApprovalID == "" {
			steps = append(steps, s)
			continue
		}
		a, err := ap.Approval(ctx, s.ApprovalID)
		if errors.Is(err, core.ErrNotFound) {
			steps = append(steps, s)
			continue
		}
		if err != nil {
			return t, fmt.Errorf("timeline: approval %s: %w", s.ApprovalID, err)
		}
		if len(a.Verdict.Approvers) > 0 {
			s.Text = strings.Replace(s.Text, "asked to", "asked "+strings.Join(a.Verdict.Approvers, ", ")+" to", 1)
		}
		steps = append(steps, s)
		if summary, ok := PreviewOf(a); ok {
			steps = append(steps, Step{Time: s.Time, Kind: Preview, Actor: opsgateActor, RunID: s.RunID, Tool: s.Tool, Risk: s.Risk,
				ApprovalID: s.ApprovalID, Text: "preview of " + s.Tool + ": " + FirstLine(summary)})
		}
	}
	t.Steps = steps
	return t, nil
}

func (b *builder) decided(kind string) {
	b.approvals.Other--
	switch kind {
	case core.AuditApproved:
		b.approvals.Approved++
	case core.AuditDenied:
		b.approvals.Denied++
	default:
		b.approvals.Other++
	}
}

func appendNew(s []string, v string) []string {
	if v == "" || slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// runEnds adds the stops and errors of runs, from how each run ended.
func (b *builder) runEnds(runs []core.Run) {
	for _, r := range runs {
		switch r.Status {
		case core.RunStopped:
			s := Step{Time: cmp.Or(r.EndedAt, r.StartedAt), Kind: Stop, Actor: opsgateActor, RunID: r.ID, Outcome: string(r.Status),
				Text: "run stopped"}
			if by, ok := b.stoppedBy[r.ID]; ok {
				s.Actor, s.Text = by.String(), "run stopped by "+by.String()
			}
			b.add(s)
		case core.RunError, core.RunMaxIterations:
			text := cmp.Or(FirstLine(r.Error), string(r.Status))
			b.add(Step{Time: cmp.Or(r.EndedAt, r.StartedAt), Kind: Error, Actor: opsgateActor, RunID: r.ID,
				Outcome: string(r.Status), Text: "run failed: " + text})
		}
	}
}

// FirstLine returns the first non-empty line of s, at most 120 characters
// (cut on a rune, marked with "…").
func FirstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if r := []rune(line); len(r) > firstLineMax {
			return string(r[:firstLineMax-1]) + "…"
		}
		return line
	}
	return ""
}
