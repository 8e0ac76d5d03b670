package slack

import (
	"context"
	"strings"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/policy"
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
	case core.KindOf(err) == core.KindNotAllowed:
		a.log.Warn("approval click refused", "approval", approvalID, "user", c.user.ID)
	case core.KindOf(err) == core.KindInternal:
		a.log.Error("decide", "approval", approvalID, "err", err)
	}
	// Make sure the card shows how the request ended, whoever decided it.
	if ap.ID != "" && ap.Status != core.ApprovalPending && ap.Status != "" {
		a.sender.Resolve(ap, c.card)
	}
	if err != nil {
		text, _ := render.DecisionReply(ap, approve, err)
		a.ephemeral(ctx, c.channel, c.user.ID, c.thread, escape(text))
	}
}

// stopClick stops the run whose draft carries the Stop button, unless it
// has ended (a newer run of the thread is not stopped by an old button).
func (a *Adapter) stopClick(ctx context.Context, c click, runID string) {
	if !policy.MayStop(a.refusal(c.channel, c.user.ID) == "", a.approvers.has(c.user.ID)) {
		a.ephemeral(ctx, c.channel, c.user.ID, c.thread, render.StopRefusal)
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
