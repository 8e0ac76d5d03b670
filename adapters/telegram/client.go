package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/opsgate/opsgate/adapters/render"
)

// ctxClient binds a context to the library's requests: tgbotapi builds its
// requests without one, so without this an in-flight long poll could not
// be cancelled at shutdown.
type ctxClient struct {
	ctx context.Context
	c   *http.Client
}

func (c ctxClient) Do(r *http.Request) (*http.Response, error) {
	return c.c.Do(r.WithContext(c.ctx))
}

// bot returns the API client for one call under ctx. BotAPI holds no
// state but its configuration, so a shallow copy per call is safe.
func (a *Adapter) bot(ctx context.Context) *tgbotapi.BotAPI {
	b := *a.api
	b.Client = ctxClient{ctx: ctx, c: a.cfg.HTTPClient}
	return &b
}

// request makes one call and classifies its failure for render.
func (a *Adapter) request(ctx context.Context, op string, c tgbotapi.Chattable) (*tgbotapi.APIResponse, error) {
	resp, err := a.bot(ctx).Request(c)
	if err != nil {
		return resp, a.classify(op, err)
	}
	return resp, nil
}

// classify turns a library error into a render.Error, and keeps the token
// out of the message (transport errors quote the URL, which contains it).
func (a *Adapter) classify(op string, err error) error {
	msg := strings.ReplaceAll(err.Error(), a.cfg.Token, "<token>")
	wrapped := fmt.Errorf("telegram: %s: %w", op, &redacted{msg: msg, err: err})
	var te *tgbotapi.Error
	if !errors.As(err, &te) {
		// No answer from Telegram: the call may or may not have happened.
		return wrapped
	}
	desc := strings.ToLower(te.Message)
	switch {
	case te.Code == http.StatusTooManyRequests:
		ra := time.Duration(te.RetryAfter) * time.Second
		if ra <= 0 {
			ra = time.Second
		}
		return render.RateLimited(ra, false, wrapped)
	case te.Code == http.StatusBadRequest && strings.Contains(desc, "can't parse entities"):
		return render.FormattingRejected(wrapped)
	case te.Code >= 500:
		return wrapped
	default:
		return render.Rejected(wrapped)
	}
}

// notModified reports Telegram's answer to an edit that changes nothing.
func notModified(err error) bool {
	var te *tgbotapi.Error
	return errors.As(err, &te) && te.Code == http.StatusBadRequest && strings.Contains(te.Message, "message is not modified")
}

// redacted is an error whose message has the bot token removed.
type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }
