package render

import (
	"errors"
	"unicode"
	"unicode/utf8"

	"github.com/opsgate/opsgate/core"
)

// DecisionReply is what the person who pressed Approve or Deny is told, for
// every result of the engine's Decide: one table for every platform, so a
// click means the same thing in Slack, Telegram and Discord. a is what
// Decide returned with err. Alert asks the platform to make the reply
// prominent (an alert, a warning) rather than a quiet acknowledgement. The
// text is plain: platforms escape it for their format.
//
// A refusal is the error's kind from core's one table (its mark, its
// alert, and Refusal's sentence), so the chats, the terminal and the HTTP
// API say the same of every kind.
func DecisionReply(a core.Approval, approve bool, err error) (text string, alert bool) {
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
	}
	info := core.KindOf(err).Info()
	text = Refusal(a, err)
	if info.Mark != "" {
		text = info.Mark + " " + text
	}
	return text, info.Alert
}

// Refusal says why a decision on a did not take, in plain sentences: the
// description of err's kind (core.Kind.Info().Text) with what only the
// approval or the error knows (the policy's reason, who decided, the votes
// so far). Every surface that decides (the chats, the terminal) says it.
func Refusal(a core.Approval, err error) string {
	k := core.KindOf(err)
	s := capitalize(k.Info().Text)
	switch k {
	case core.KindNotAllowed:
		s += "."
		var refused *core.NotAllowedError
		if errors.As(err, &refused) && refused.Reason != "" {
			// The policy's own sentence: what is said is what is enforced.
			s += " " + refused.Reason
		}
		return s + " Your attempt was recorded."
	case core.KindAlreadyDecided:
		return s + ": " + Outcome(a) + "."
	case core.KindAlreadyVoted:
		return s + " (" + Progress(a) + "); it needs another person."
	case core.KindNotFound:
		return s + "; nothing was run."
	case core.KindInternal:
		return "Your decision could not be recorded: " + k.Info().Text + "."
	}
	return s + "."
}

// capitalize upper-cases s's first letter.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
