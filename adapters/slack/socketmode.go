package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// runSocketMode receives envelopes until ctx ends. slack-go's client
// reconnects by itself (on Slack's disconnect requests and when Slack's
// PINGs stop); it gives up only on refused tokens.
func (a *Adapter) runSocketMode(ctx context.Context) error {
	sm := socketmode.New(a.api, socketmode.OptionLog(slog.NewLogLogger(a.log.Handler(), slog.LevelDebug)))
	errc := make(chan error, 1)
	go func() { errc <- sm.RunContext(ctx) }()
	for {
		select {
		case err := <-errc:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("slack: socket mode (check app_token): %w", err)
		case evt := <-sm.Events:
			a.onSocketEvent(ctx, sm, evt)
		}
	}
}

// onSocketEvent acknowledges an envelope at once and hands its work to a
// goroutine: Slack redelivers what is not acknowledged within 3 seconds.
func (a *Adapter) onSocketEvent(ctx context.Context, sm *socketmode.Client, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeConnecting:
		// slack-go reconnects (after Slack's disconnect request, a dropped
		// socket) without another event; keep an earlier failure's reason.
		if up, _ := a.link.Health(0); up {
			a.link.Down(errors.New("connection closed; reconnecting"))
		}
		a.log.Debug("socket mode connecting")
	case socketmode.EventTypeConnected:
		a.link.Up()
		a.log.Info("socket mode connected")
	case socketmode.EventTypeConnectionError:
		if ctx.Err() != nil {
			return // the connection closing at shutdown
		}
		a.link.Down(fmt.Errorf("%s: %v", evt.Type, evt.Data))
		a.log.Warn("socket mode connection trouble; retrying", "event", evt.Type, "data", fmt.Sprint(evt.Data))
	case socketmode.EventTypeIncomingError:
		// A read error comes from a connection's own goroutine, so it can
		// arrive after the next connection's Connected (a stale error
		// would then mark a live link down), and a malformed message
		// keeps the connection. A connection that really broke is
		// reconnected, which begins with Connecting: that marks it down.
		if ctx.Err() == nil {
			a.log.Warn("socket mode read error", "data", fmt.Sprint(evt.Data))
		}
	case socketmode.EventTypeInvalidAuth:
		a.link.Down(errors.New("the app token was refused"))
		a.log.Error("socket mode: the app token was refused")
	case socketmode.EventTypeDisconnect:
		a.link.Down(errors.New("asked by Slack to reconnect"))
		a.log.Info("socket mode: Slack asked to reconnect")
	case socketmode.EventTypeErrorBadMessage:
		// Unparseable (e.g. an event type slack-go does not know): still
		// acknowledge it, or Slack redelivers it for hours.
		if bad, ok := evt.Data.(*socketmode.ErrorBadMessage); ok {
			var req socketmode.Request
			if json.Unmarshal(bad.Message, &req) == nil && req.EnvelopeID != "" {
				a.ack(ctx, sm, req.EnvelopeID, nil)
			}
			a.log.Debug("socket mode: unsupported envelope acknowledged", "err", bad.Cause)
		}
	case socketmode.EventTypeEventsAPI:
		if !a.ackFirst(ctx, sm, evt, nil) {
			return
		}
		ev, ok := evt.Data.(slackevents.EventsAPIEvent)
		if !ok {
			return
		}
		if cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent); ok && !a.seen.first("event", cb.EventID) {
			a.log.Info("redelivered event ignored", "event_id", cb.EventID, "retry", evt.Request.RetryAttempt)
			return
		}
		a.spawn("event", func(ctx context.Context) { a.onEvent(ctx, ev) })
	case socketmode.EventTypeInteractive:
		if !a.ackFirst(ctx, sm, evt, nil) {
			return
		}
		if cb, ok := evt.Data.(slack.InteractionCallback); ok {
			a.spawn("interaction", func(ctx context.Context) { a.onInteraction(ctx, cb) })
		}
	case socketmode.EventTypeSlashCommand:
		cmd, ok := evt.Data.(slack.SlashCommand)
		if !ok {
			a.ackFirst(ctx, sm, evt, nil)
			return
		}
		reply, work := a.command(cmd)
		var payload any
		if reply != nil {
			payload = reply
		}
		if !a.ackFirst(ctx, sm, evt, payload) {
			return
		}
		if work != nil {
			a.spawn("command", work)
		}
	}
}

// ackFirst acknowledges the envelope of evt and reports whether it is the
// first delivery of that envelope.
func (a *Adapter) ackFirst(ctx context.Context, sm *socketmode.Client, evt socketmode.Event, payload any) bool {
	if evt.Request == nil {
		return true
	}
	a.ack(ctx, sm, evt.Request.EnvelopeID, payload)
	if !a.seen.first("envelope", evt.Request.EnvelopeID) {
		a.log.Info("redelivered envelope ignored", "envelope", evt.Request.EnvelopeID)
		return false
	}
	return true
}

func (a *Adapter) ack(ctx context.Context, sm *socketmode.Client, envelopeID string, payload any) {
	if err := sm.AckCtx(ctx, envelopeID, payload); err != nil {
		a.log.Warn("socket mode ack failed", "envelope", envelopeID, "err", err)
	}
}
