package core

// shown is a made safe to show people (Deps.DisplayApproval): the one door
// approvals leave the engine by, beside the events' display filter.
func (e *Engine) shown(a Approval) Approval {
	if e.showApproval == nil || a.ID == "" {
		return a
	}
	return e.showApproval(a)
}
