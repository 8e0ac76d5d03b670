package core

// setRiskSources records in each proposal's audit entry where the risk of
// the call it asks about came from (docs/design.md §3): the server's
// annotations, a configured override, or the default.
func setRiskSources(proposed []AuditEntry, calls []PendingCall) {
	for i := range proposed {
		if k := indexOfApproval(calls, proposed[i].ApprovalID); k >= 0 {
			proposed[i].RiskSource = calls[k].Tool.RiskSource
		}
	}
}
