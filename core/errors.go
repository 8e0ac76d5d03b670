package core

import (
	"errors"
	"fmt"
)

// Errors shared by the engine and stores; test with errors.Is.
var (
	// ErrNotFound: the conversation, run, checkpoint or approval does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyDecided: an approval was decided before (first decision wins).
	ErrAlreadyDecided = errors.New("already decided")
	// ErrExpired: an approval passed its expiry; it counts as denied.
	ErrExpired = errors.New("approval expired")
	// ErrNotAllowed: the actor may not decide this approval.
	ErrNotAllowed = errors.New("not allowed to decide this approval")
	// ErrShuttingDown: the engine no longer accepts messages; the platform
	// should redeliver the message later (it was not stored).
	ErrShuttingDown = errors.New("engine is shutting down")
	// ErrHashMismatch: the action about to run is not the one approved.
	ErrHashMismatch = errors.New("action does not match the approved action hash")
	// ErrAlreadyVoted: this person's vote on the approval is already
	// counted (a quorum counts each person once).
	ErrAlreadyVoted = errors.New("already voted")
	// ErrRateLimited: the person started too many runs in the last minute;
	// the message was not stored (see LimitError).
	ErrRateLimited = errors.New("too many runs")
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

// NotAllowedError is Decide's refusal: Reason is the policy's sentence
// (Eligibility.Reason) to show the person, so what is said is what is
// enforced. It matches ErrNotAllowed.
type NotAllowedError struct{ Reason string }

func (e *NotAllowedError) Error() string { return ErrNotAllowed.Error() + ": " + e.Reason }

// Is makes errors.Is(err, ErrNotAllowed) hold.
func (e *NotAllowedError) Is(target error) bool { return target == ErrNotAllowed }
