package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/slack-go/slack"
)

// MaxText is the longest Markdown of one Slack message; a longer reply
// continues in a new message of the thread. Slack takes up to 50 blocks of
// 3,000 characters, but refuses a message with more than about 12,000
// characters of block text in all (msg_blocks_too_long), and escaping can
// make mrkdwn longer than its Markdown.
const MaxText = 8000

// platform is render.Platform over the Web API: a conversation key names
// a channel and a thread; a message reference is the message's ts.
type platform struct {
	api      *slack.Client
	confirms *confirms
	limits   render.Limits
}

var (
	_ render.Platform  = (*platform)(nil)
	_ render.RateKeyer = (*platform)(nil)
)

func (p *platform) Limits() render.Limits { return p.limits }

// RateKey is the channel: chat.postMessage is limited per channel, and a
// channel's threads share that budget.
func (p *platform) RateKey(conv string) string {
	if _, ch, _, ok := parseKey(conv); ok {
		return ch
	}
	return conv
}

func (p *platform) Post(ctx context.Context, conv string, m render.Message) (render.MsgRef, error) {
	_, ch, thread, ok := parseKey(conv)
	if !ok {
		return "", render.Rejected(fmt.Errorf("slack: post message: not a Slack conversation key: %q", conv))
	}
	blocks, fallback := toBlocks(m, p.confirms)
	opts := []slack.MsgOption{
		slack.MsgOptionText(fallback, false), slack.MsgOptionBlocks(blocks...),
		slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl(),
	}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	_, ts, err := p.api.PostMessageContext(ctx, ch, opts...)
	if err != nil {
		return "", classify(fmt.Errorf("slack: post message: %w", err))
	}
	return render.MsgRef(ts), nil
}

func (p *platform) Edit(ctx context.Context, conv string, ref render.MsgRef, m render.Message) error {
	_, ch, _, ok := parseKey(conv)
	if !ok {
		return render.Rejected(fmt.Errorf("slack: update message: not a Slack conversation key: %q", conv))
	}
	blocks, fallback := toBlocks(m, p.confirms)
	_, _, _, err := p.api.UpdateMessageContext(ctx, ch, string(ref), slack.MsgOptionText(fallback, false), slack.MsgOptionBlocks(blocks...))
	if err != nil {
		return classify(fmt.Errorf("slack: update message: %w", err))
	}
	return nil
}

// classify tells render what a failed call means. Slack's ok=false errors
// are definitive (nothing happened) except the ones that say the server
// failed midway; HTTP 5xx and transport errors are ambiguous.
func classify(err error) error {
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return render.RateLimited(rl.RetryAfter, false, err)
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		switch {
		case sc.Code == http.StatusTooManyRequests:
			return render.RateLimited(time.Second, false, err)
		case sc.Code >= 500:
			return err
		}
		return render.Rejected(err)
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "ratelimited", "rate_limited":
			return render.RateLimited(time.Second, false, err)
		case "invalid_blocks", "invalid_blocks_format", "msg_blocks_too_long", "msg_too_long", "markdown_text_conflict":
			return render.FormattingRejected(err)
		case "internal_error", "fatal_error", "service_unavailable", "request_timeout":
			return err
		}
		return render.Rejected(err)
	}
	return err
}
