package httpapi

import (
	"net/http"

	"github.com/opsgate/opsgate/core"
)

// approvals answers GET /api/v1/approvals?status=pending (the only status
// served so far), oldest first, across every platform.
func (a *API) approvals(w http.ResponseWriter, r *http.Request, _ core.Actor) {
	if s := r.URL.Query().Get("status"); s != "" && s != string(core.ApprovalPending) {
		writeKind(w, core.KindInvalid, "status must be pending")
		return
	}
	as, err := a.o.Store.PendingApprovals(r.Context())
	if err == nil {
		as, err = visible(r.Context(), viewerOf(r), as, func(ap core.Approval) string { return ap.ConvKey })
	}
	if err != nil {
		a.fail(w, "approvals", err)
		return
	}
	a.reply(w, http.StatusOK, map[string]any{"approvals": nonNil(as)})
}

// decisionRequest is the body of POST /api/v1/approvals/{id}/decision.
type decisionRequest struct {
	Decision string `json:"decision"` // approve | deny
	Reason   string `json:"reason"`
}

// decision applies the caller's decision through the engine, so the
// policy's approvers, self-approval and quorum hold as in chat. It
// answers the approval as it now stands (still pending while a quorum is
// not reached).
func (a *API) decision(w http.ResponseWriter, r *http.Request, who core.Actor) {
	var req decisionRequest
	if !decode(w, r, &req) {
		return
	}
	if req.Decision != "approve" && req.Decision != "deny" {
		writeKind(w, core.KindInvalid, `decision must be "approve" or "deny"`)
		return
	}
	id := r.PathValue("id")
	_, err := a.o.Store.Approval(r.Context(), id)
	var got core.Approval
	if err == nil {
		got, err = a.o.Engine.Decide(r.Context(), core.Decision{ApprovalID: id, Actor: who, Approve: req.Decision == "approve", Reason: req.Reason})
	}
	if a.o.Decided != nil {
		a.o.Decided(err)
	}
	if err != nil {
		a.fail(w, "approval "+id, err)
		return
	}
	a.reply(w, http.StatusOK, map[string]any{"approval": got})
}

// stop answers POST /api/v1/runs/{id}/stop: a run still running or
// awaiting approval is stopped as /stop in its chat would (its pending
// approvals are cancelled). stopped is false when the run had ended: a
// later run of the conversation is left alone.
func (a *API) stop(w http.ResponseWriter, r *http.Request, _ core.Actor) {
	id := r.PathValue("id")
	run, err := a.o.Store.Run(r.Context(), id)
	if err != nil {
		a.fail(w, "run "+id, err)
		return
	}
	stopped := false
	if run.Status == core.RunRunning || run.Status == core.RunAwaitingApproval {
		stopped = a.o.Engine.Stop(r.Context(), run.ConvKey)
	}
	a.reply(w, http.StatusOK, map[string]any{"run_id": id, "stopped": stopped})
}
