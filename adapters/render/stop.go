package render

import "github.com/opsgate/opsgate/core"

// StopRefusal is what a person whom policy.MayStop refuses is told when
// they press Stop, on every platform: the one rule, in one sentence.
var StopRefusal = core.KindNotAllowed.Info().Mark + " You are not allowed to stop this run: only people who may talk to opsgate here, and approvers, may."
