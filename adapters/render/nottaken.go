package render

import (
	"errors"

	"github.com/opsgate/opsgate/core"
)

// RefusalReply is what a person is told when the engine refused their
// message on purpose (core.Engine.Handle): one table for every platform,
// like DecisionReply. ok is false for any other error, which the adapter
// handles as a failure to hand the message over (the platform may
// deliver it again). A refused message is answered and not retried: it
// was not stored, and retrying would only be refused again.
func RefusalReply(err error) (text string, ok bool) {
	var limit *core.LimitError
	if errors.As(err, &limit) {
		return "⏳ " + limit.Error(), true
	}
	return "", false
}
