package slack

import (
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"
)

// PostRoot posts an incident's root message in channel and returns the
// conversation of its thread and the root's reference ("<channel>/<ts>")
// for EditRoot (docs/design.md §19). People answer in the thread without
// a mention: the bot started it.
func (a *Adapter) PostRoot(ctx context.Context, channel, text, _ string) (thread, root string, err error) {
	thread, err = a.StartThread(ctx, channel, text, "")
	if err != nil {
		return "", "", err
	}
	_, ch, ts, _ := parseKey(thread)
	return thread, ch + "/" + ts, nil
}

// EditRoot replaces the text of a root PostRoot posted.
func (a *Adapter) EditRoot(ctx context.Context, root, text string) error {
	channel, ts, ok := strings.Cut(root, "/")
	if !ok || channel == "" || ts == "" {
		return fmt.Errorf("slack: %q is not a root message reference (<channel>/<ts>)", root)
	}
	err := a.call(ctx, channel, func(ctx context.Context) error {
		_, _, _, err := a.api.UpdateMessageContext(ctx, channel, ts, slack.MsgOptionText(text, false))
		return err
	})
	if err != nil {
		return fmt.Errorf("slack: edit the root message %s: %w", root, err)
	}
	return nil
}

// Say posts text in the conversation thread, in order with its runs'
// messages.
func (a *Adapter) Say(_ context.Context, thread, text string) error {
	if _, _, _, ok := parseKey(thread); !ok {
		return fmt.Errorf("slack: %q is not a Slack conversation", thread)
	}
	a.sender.Say(thread, text)
	return nil
}
