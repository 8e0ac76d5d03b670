package discord

import (
	"context"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/policy"
)

// ackTimeout bounds the first answer to an interaction: Discord forgets an
// interaction that is not answered within 3 s.
const ackTimeout = 2500 * time.Millisecond

// onInteraction handles a slash command or a click on its own goroutine:
// it must be answered within 3 s, whatever the channel's queue holds.
func (a *Adapter) onInteraction(_ *discordgo.Session, ic *discordgo.InteractionCreate) {
	i := ic.Interaction
	if i == nil || !a.seen.first("i"+i.ID) || !a.track() {
		return
	}
	go func() {
		defer a.work.Done()
		ctx, cancel := context.WithTimeout(a.ctx, handleTimeout)
		defer cancel()
		switch i.Type {
		case discordgo.InteractionApplicationCommand:
			a.handleCommand(ctx, i)
		case discordgo.InteractionMessageComponent:
			a.handleClick(ctx, i)
		}
	}()
}

// ack answers an interaction at once with a deferred response; the real
// answer follows by editing it (commands) or in followups (clicks).
func (a *Adapter) ack(ctx context.Context, i *discordgo.Interaction, typ discordgo.InteractionResponseType, ephemeral bool) error {
	ctx, cancel := context.WithTimeout(ctx, ackTimeout)
	defer cancel()
	resp := &discordgo.InteractionResponse{Type: typ}
	if ephemeral {
		resp.Data = &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral}
	}
	err := withRetry(ctx, func() error { return a.dg.InteractionRespond(i, resp, discordgo.WithContext(ctx)) })
	if err != nil {
		if apiCode(err) == codeAlreadyAcked {
			return err // another process (or a replay) answered it
		}
		a.log.Error("acknowledge interaction", "interaction", i.ID, "err", err)
	}
	return err
}

// answer replaces the deferred response of a command with text.
func (a *Adapter) answer(ctx context.Context, i *discordgo.Interaction, text string) (*discordgo.Message, error) {
	text = content(render.Message{Text: text})
	var msg *discordgo.Message
	err := withRetry(ctx, func() error {
		var err error
		msg, err = a.dg.InteractionResponseEdit(i, &discordgo.WebhookEdit{Content: &text, AllowedMentions: noMentions},
			discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		a.log.Error("answer interaction", "interaction", i.ID, "err", err)
	}
	return msg, err
}

// whisper tells only the person who clicked.
func (a *Adapter) whisper(ctx context.Context, i *discordgo.Interaction, text string) {
	err := withRetry(ctx, func() error {
		_, err := a.dg.FollowupMessageCreate(i, true, &discordgo.WebhookParams{
			Content: content(render.Message{Text: text}), Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions,
		}, discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		a.log.Error("send ephemeral reply", "interaction", i.ID, "err", err)
	}
}

// interactionUser is who invoked an interaction: Member.User in guilds,
// User in DMs.
func interactionUser(i *discordgo.Interaction) core.Actor {
	if i.Member != nil && i.Member.User != nil {
		return actorOf(i.Member.User)
	}
	return actorOf(i.User)
}

// mayTalk reports whether user may use the bot where the interaction
// happened, and what the channel is.
func (a *Adapter) mayTalk(ctx context.Context, i *discordgo.Interaction, user core.Actor) (place, bool, error) {
	if i.GuildID == "" {
		return place{}, a.cfg.allowsDM(user.ID), nil
	}
	if !a.cfg.allowsGuild(i.GuildID) {
		return place{}, false, nil
	}
	pl, err := a.place(ctx, i.ChannelID)
	if err != nil {
		return pl, false, err
	}
	return pl, a.cfg.allowsPlace(i.GuildID, pl.root(i.ChannelID)), nil
}

// surelyRefused reports whether an interaction is refused, as far as can
// be told without a lookup; its answer is then private from the start.
func (a *Adapter) surelyRefused(i *discordgo.Interaction, user core.Actor) bool {
	if i.GuildID == "" {
		return !a.cfg.allowsDM(user.ID)
	}
	if !a.cfg.allowsGuild(i.GuildID) {
		return true
	}
	pl, known := a.places.get(i.ChannelID)
	return known && !a.cfg.allowsPlace(i.GuildID, pl.root(i.ChannelID))
}

// handleClick handles Approve, Deny and Stop. The click is acknowledged
// first without changing the message; the card changes when the engine
// has decided, and refusals are told privately.
func (a *Adapter) handleClick(ctx context.Context, i *discordgo.Interaction) {
	data := i.MessageComponentData()
	if a.ack(ctx, i, discordgo.InteractionResponseDeferredMessageUpdate, false) != nil {
		return
	}
	act, id, ok := render.ParseButtonData(data.CustomID)
	user := interactionUser(i)
	if !ok || i.Message == nil || user.ID == "" {
		return // not our button, or nobody to decide as
	}
	_, allowed, err := a.mayTalk(ctx, i, user)
	if act == render.ActionStop {
		// The one rule of every platform: approvers (discord.approvers)
		// may stop a run even where they may not talk to the bot.
		if policy.MayStop(allowed && err == nil, listed(a.cfg.Approvers, user.ID)) {
			a.clickStop(ctx, i, ConvKey(i.GuildID, i.ChannelID), id, user)
			return
		}
		if err == nil {
			a.log.Info("stop click refused", "user", user.ID, "channel", i.ChannelID)
			a.whisper(ctx, i, render.StopRefusal)
			return
		}
	}
	switch {
	case err != nil:
		a.whisper(ctx, i, textLookupFailed)
		return
	case !allowed:
		a.log.Info("click outside the allowlists refused", "user", user.ID, "channel", i.ChannelID)
		a.whisper(ctx, i, textNotHere)
		return
	}
	if act == render.ActionApprove || act == render.ActionDeny {
		a.clickDecide(ctx, i, id, act == render.ActionApprove, user)
	}
}

func (a *Adapter) clickDecide(ctx context.Context, i *discordgo.Interaction, id string, approve bool, user core.Actor) {
	ap, err := a.engineOf().Decide(ctx, core.Decision{ApprovalID: id, Actor: user, Approve: approve})
	ref := render.MsgRef(i.Message.ID)
	if err == nil {
		a.log.Info("approval decided", "approval", id, "by", user.ID, "approve", approve)
		a.out.Resolve(ap, ref)
		return
	}
	a.log.Info("click decided nothing", "approval", id, "by", user.ID, "err", err)
	if ap.Status != "" && ap.Status != core.ApprovalPending {
		a.out.Resolve(ap, ref) // make sure the card shows how it was decided
	}
	text, _ := render.DecisionReply(ap, approve, err)
	a.whisper(ctx, i, text)
}

// clickStop stops the run whose draft carries the button, not a newer run
// of the same conversation.
func (a *Adapter) clickStop(ctx context.Context, i *discordgo.Interaction, key, run string, user core.Actor) {
	eng := a.engineOf()
	st, err := eng.Status(ctx, key)
	if err == nil && (st.ActiveRun == nil || !strings.HasPrefix(st.ActiveRun.ID, run)) {
		a.whisper(ctx, i, "That run has already finished.")
		return
	}
	a.log.Info("stop pressed", "conv", key, "by", user.ID)
	if !eng.Stop(ctx, key) {
		a.whisper(ctx, i, "That run has already finished.")
	}
}
