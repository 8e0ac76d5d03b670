package render

import (
	"errors"

	"github.com/opsgate/opsgate/core"
)

// DecisionReply is what the person who pressed Approve or Deny is told, for
// every result of the engine's Decide: one table for every platform, so a
// click means the same thing in Slack, Telegram and Discord. a is what
// Decide returned with err. Alert asks the platform to make the reply
// prominent (an alert, a warning) rather than a quiet acknowledgement. The
// text is plain: platforms escape it for their format.
func DecisionReply(a core.Approval, approve bool, err error) (text string, alert bool) {
	var refused *core.NotAllowedError
	switch {
	case err == nil && a.Verdict.Proposal && approve:
		return "⬆️ Promoted: it is workspace memory now.", false
	case err == nil && a.Verdict.Proposal:
		return "🗑 Rejected: it stays a draft.", false
	case err == nil && a.Status == core.ApprovalPending:
		return "👍 Your approval is counted: " + Progress(a) + ". " + a.Tool + " runs once the quorum is reached.", false
	case err == nil && approve:
		return "✅ Approved: running " + a.Tool + ".", false
	case err == nil:
		return "❌ Denied: " + a.Tool + " will not run.", false
	case errors.As(err, &refused):
		// The policy's own sentence: what is said is what is enforced.
		return "⛔ You are not allowed to decide this request. " + refused.Reason + " Your attempt was recorded.", true
	case errors.Is(err, core.ErrNotAllowed):
		return "⛔ You are not allowed to decide this request. Your attempt was recorded.", true
	case errors.Is(err, core.ErrAlreadyVoted):
		return "Your decision on this request is already counted (" + Progress(a) + "); it needs another person.", false
	case errors.Is(err, core.ErrAlreadyDecided):
		return "This request was already decided: " + Outcome(a) + ".", false
	case errors.Is(err, core.ErrExpired):
		return "⌛ This request expired; nothing was run.", true
	case errors.Is(err, core.ErrNotFound):
		return "This approval request no longer exists; nothing was run.", true
	case errors.Is(err, core.ErrHashMismatch):
		return "⛔ The action changed since it was shown; nothing was run.", true
	default:
		return "⚠️ Your decision could not be recorded; press the button again.", true
	}
}
