package slack

import (
	"context"
	"errors"
	"strings"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
	"github.com/slack-go/slack"
)

// click is a button press, whichever transport brought it.
type click struct {
	user                  core.Actor
	channel, thread, card string // card: the ts of the message with the button
}

// onInteraction handles a block_actions payload, after the ack. A click is
// never trusted by its payload: the approval id is looked up by the
// engine, which checks the clicker and audits refusals.
func (a *Adapter) onInteraction(ctx context.Context, cb slack.InteractionCallback) {
	if cb.Type != slack.InteractionTypeBlockActions {
		return
	}
	c := click{
		user:    core.Actor{ID: cb.User.ID},
		channel: firstNonEmpty(cb.Container.ChannelID, cb.Channel.ID),
		thread:  firstNonEmpty(cb.Container.ThreadTs, cb.Message.ThreadTimestamp),
		card:    firstNonEmpty(cb.Container.MessageTs, cb.Message.Timestamp),
	}
	if c.user.ID == "" || c.channel == "" {
		return
	}
	c.user = a.actor(ctx, c.user.ID, cb.User.Name)
	for _, act := range cb.ActionCallback.BlockActions {
		if !strings.HasPrefix(act.ActionID, actionIDPrefix) {
			continue
		}
		action, id, ok := render.ParseButtonData(act.Value)
		if !ok {
			continue
		}
		switch action {
		case render.ActionApprove, render.ActionDeny:
			a.decide(ctx, c, id, action == render.ActionApprove)
		case render.ActionStop:
			a.stopClick(ctx, c, id)
		}
	}
}

// decide records an Approve or Deny and shows the outcome on the card.
func (a *Adapter) decide(ctx context.Context, c click, approvalID string, approve bool) {
	eng := a.getEngine()
	if eng == nil {
		a.ephemeral(ctx, c.channel, c.user.ID, c.thread, "⚠️ opsgate is not ready yet; press the button again in a moment.")
		return
	}
	ap, err := eng.Decide(ctx, core.Decision{ApprovalID: approvalID, Actor: c.user, Approve: approve})
	switch {
	case err == nil:
		a.sender.Resolve(ap, c.card)
	case errors.Is(err, core.ErrNotAllowed):
		a.log.Warn("approval click refused", "approval", approvalID, "user", c.user.ID)
		who := "the person who asked"
		if ap.Requester.ID != "" {
			who = "<@" + ap.Requester.ID + "> (who asked)"
		}
		a.ephemeral(ctx, c.channel, c.user.ID, c.thread,
			"⛔ You are not allowed to decide this request. Only "+who+" or a configured approver can. Your attempt was logged.")
	case errors.Is(err, core.ErrAlreadyDecided):
		a.sender.Resolve(ap, c.card)
		a.ephemeral(ctx, c.channel, c.user.ID, c.thread, "This request was already decided: "+describe(ap)+".")
	case errors.Is(err, core.ErrExpired):
		a.sender.Resolve(ap, c.card)
		a.ephemeral(ctx, c.channel, c.user.ID, c.thread, "⌛ This request expired; nothing was run.")
	case errors.Is(err, core.ErrNotFound):
		a.ephemeral(ctx, c.channel, c.user.ID, c.thread, "This approval request no longer exists; nothing was run.")
	case errors.Is(err, core.ErrHashMismatch):
		a.ephemeral(ctx, c.channel, c.user.ID, c.thread, "⛔ The action changed since it was shown; nothing was run.")
	default:
		a.log.Error("decide", "approval", approvalID, "err", err)
		a.ephemeral(ctx, c.channel, c.user.ID, c.thread, "⚠️ Your decision was not recorded ("+escape(err.Error())+"); press the button again.")
	}
}

// describe says how an approval was decided, for people.
func describe(ap core.Approval) string {
	who := escape(ap.DecidedBy.String())
	switch ap.Status {
	case core.ApprovalApproved:
		return "approved by " + who
	case core.ApprovalDenied:
		return "denied by " + who
	case core.ApprovalExpired:
		return "expired"
	case core.ApprovalSuperseded:
		return "superseded by a new message"
	case core.ApprovalCancelled:
		return "cancelled"
	}
	return string(ap.Status)
}

// stopClick stops the run whose draft carries the Stop button, unless it
// has ended (a newer run of the thread is not stopped by an old button).
func (a *Adapter) stopClick(ctx context.Context, c click, runID string) {
	if a.refusal(c.channel, c.user.ID) != "" && !a.approvers.has(c.user.ID) {
		a.ephemeral(ctx, c.channel, c.user.ID, c.thread, "🚫 You may not stop runs here.")
		return
	}
	me, err := a.identify(ctx)
	eng := a.getEngine()
	if err != nil || eng == nil {
		a.ephemeral(ctx, c.channel, c.user.ID, c.thread, "⚠️ opsgate is not ready yet.")
		return
	}
	key := ConvKey(me.teamID, c.channel, c.thread)
	st, err := eng.Status(ctx, key)
	if err != nil || st.ActiveRun == nil || !strings.HasPrefix(st.ActiveRun.ID, runID) {
		a.ephemeral(ctx, c.channel, c.user.ID, c.thread, "That run has already finished.")
		return
	}
	a.log.Info("stop pressed", "conv", key, "user", c.user.ID)
	eng.Stop(ctx, key)
}
