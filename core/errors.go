package core

import (
	"fmt"
	"strings"
)

// Errors shared by the engine and stores; test with errors.Is, or read
// their kind with KindOf (what every surface shows comes from the kind).
var (
	// ErrNotFound: the conversation, run, checkpoint or approval does not exist.
	ErrNotFound = NewKindError(KindNotFound, "not found")
	// ErrAlreadyDecided: an approval was decided before (first decision wins).
	ErrAlreadyDecided = NewKindError(KindAlreadyDecided, "already decided")
	// ErrExpired: an approval passed its expiry; it counts as denied.
	ErrExpired = NewKindError(KindExpired, "approval expired")
	// ErrNotAllowed: the actor may not decide this approval.
	ErrNotAllowed = NewKindError(KindNotAllowed, "not allowed to decide this approval")
	// ErrShuttingDown: the engine no longer accepts messages; the platform
	// should redeliver the message later (it was not stored).
	ErrShuttingDown = NewKindError(KindShuttingDown, "engine is shutting down")
	// ErrHashMismatch: the action about to run is not the one approved.
	ErrHashMismatch = NewKindError(KindHashMismatch, "action does not match the approved action hash")
	// ErrAlreadyVoted: this person's vote on the approval is already
	// counted (a quorum counts each person once).
	ErrAlreadyVoted = NewKindError(KindAlreadyVoted, "already voted")
	// ErrRateLimited: the person started too many runs in the last minute;
	// the message was not stored (see LimitError).
	ErrRateLimited = NewKindError(KindRateLimited, "too many runs")
)

// LimitError is Handle's refusal of a message over the person's run limit
// (limits.runs_per_person_per_minute). Its Error is the sentence to show
// them; the message was not stored, so nothing of it runs later.
type LimitError struct{ Limit int }

func (e *LimitError) Error() string {
	return fmt.Sprintf("You have started %d runs in the last minute (limits.runs_per_person_per_minute); nothing was started. Wait a moment and ask again.", e.Limit)
}

// Is makes errors.Is(err, ErrRateLimited) hold.
func (e *LimitError) Is(target error) bool { return target == ErrRateLimited }

// Kind is KindRateLimited.
func (e *LimitError) Kind() Kind { return KindRateLimited }

// NotAllowedError is Decide's refusal: Reason is the policy's sentence
// (Eligibility.Reason) to show the person, so what is said is what is
// enforced. It matches ErrNotAllowed.
type NotAllowedError struct{ Reason string }

func (e *NotAllowedError) Error() string { return ErrNotAllowed.Error() + ": " + e.Reason }

// Is makes errors.Is(err, ErrNotAllowed) hold.
func (e *NotAllowedError) Is(target error) bool { return target == ErrNotAllowed }

// Kind is KindNotAllowed.
func (e *NotAllowedError) Kind() Kind { return KindNotAllowed }

// SchemaError reports a database whose schema is not the one its
// migrations made: it was changed outside opsgate. Each entry is a kind and
// a name, e.g. "trigger audit_no_delete". Both stores return it from their
// schema checks.
type SchemaError struct {
	// Store names the store (sqlite, postgres).
	Store string
	// Missing are tables, indexes and triggers the migrations created.
	Missing []string
	// Changed are triggers whose definition is not the migrations' one.
	Changed []string
	// Unexpected are triggers the migrations did not create (a trigger can
	// silently drop audit entries).
	Unexpected []string
	// Audit is true when the audit table or its protection is affected.
	Audit bool
}

func (e *SchemaError) Error() string {
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"missing", e.Missing}, {"changed", e.Changed}, {"unexpected", e.Unexpected}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+" "+strings.Join(p.names, ", "))
		}
	}
	msg := e.Store + ": schema check: " + strings.Join(parts, "; ")
	if e.Audit {
		msg += ": the audit log is not protected (append-only)"
	}
	return msg + "; the database was changed outside opsgate"
}
