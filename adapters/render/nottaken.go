package render

import (
	"errors"

	"github.com/opsgate/opsgate/core"
)

// RefusalReply is what a person is told when the engine refused their
// message on purpose (core.Engine.Handle): one table for every platform,
// like DecisionReply, read from core's table of error kinds. ok is false
// for any other error, which the adapter handles as a failure to hand the
// message over (the platform may deliver it again). A refused message is
// answered and not retried: it was not stored, and retrying would only be
// refused again.
func RefusalReply(err error) (text string, ok bool) {
	if core.KindOf(err) != core.KindRateLimited {
		return "", false
	}
	info := core.KindRateLimited.Info()
	var limit *core.LimitError
	if errors.As(err, &limit) {
		// The limit's own sentence names the limit and its key.
		return info.Mark + " " + limit.Error(), true
	}
	return info.Mark + " " + capitalize(info.Text) + ".", true
}
