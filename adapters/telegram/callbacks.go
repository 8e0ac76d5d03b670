package telegram

import (
	"context"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/policy"
)

// onCallback handles a button press. Every press is answered (Telegram
// shows a spinner until then); the data is only a reference that is looked
// up, and the engine decides who may decide.
func (a *Adapter) onCallback(ctx context.Context, q *tgbotapi.CallbackQuery) {
	action, id, ok := render.ParseButtonData(q.Data)
	if !ok || q.From == nil {
		a.answer(ctx, q.ID, "This button is no longer valid.", false)
		return
	}
	var ref render.MsgRef
	var chat int64
	if q.Message != nil && q.Message.Chat != nil {
		ref, chat = render.MsgRef(strconv.Itoa(q.Message.MessageID)), q.Message.Chat.ID
	}
	if action == render.ActionStop {
		a.clickStop(ctx, q, chat, id)
		return
	}
	a.clickDecision(ctx, q, id, action == render.ActionApprove, ref)
}

func (a *Adapter) clickDecision(ctx context.Context, q *tgbotapi.CallbackQuery, id string, approve bool, ref render.MsgRef) {
	actor := actorOf(q.From)
	ap, err := a.engine().Decide(ctx, core.Decision{ApprovalID: id, Actor: actor, Approve: approve})
	text, alert := render.DecisionReply(ap, approve, err)
	a.answer(ctx, q.ID, text, alert)
	switch {
	case err == nil:
	case core.KindOf(err) == core.KindNotAllowed:
		// The engine audited the attempt.
		a.log.Warn("telegram: approval click by someone who may not decide", "approval", id, "user", actor.ID)
	case core.KindOf(err) == core.KindInternal:
		a.log.Error("telegram: decide", "approval", id, "user", actor.ID, "err", err)
	}
	// Make sure the card shows how the request ended, whoever decided it.
	if ap.ID != "" && ap.Status != core.ApprovalPending && ap.Status != "" {
		a.sender.Resolve(ap, ref)
	}
}

// clickStop stops the run whose Stop button was pressed, and only that
// run: a late click must not stop a newer one.
func (a *Adapter) clickStop(ctx context.Context, q *tgbotapi.CallbackQuery, chat int64, runPrefix string) {
	if !policy.MayStop(a.allowed[q.From.ID], a.approvers[q.From.ID]) {
		a.answer(ctx, q.ID, render.StopRefusal, true)
		return
	}
	key := a.convKey(ctx, chat)
	st, err := a.engine().Status(ctx, key)
	if err != nil || st.ActiveRun == nil || !strings.HasPrefix(st.ActiveRun.ID, runPrefix) {
		a.answer(ctx, q.ID, "That request has already finished.", false)
		return
	}
	a.engine().Stop(ctx, key)
	a.answer(ctx, q.ID, "⏹ Stopping…", false)
}

func (a *Adapter) answer(ctx context.Context, id, text string, alert bool) {
	cb := tgbotapi.NewCallback(id, text)
	if alert {
		cb = tgbotapi.NewCallbackWithAlert(id, text)
	}
	if _, err := a.request(ctx, "answer callback", cb); err != nil {
		a.log.Warn("telegram: answer callback", "err", err)
	}
}
