package discord

import (
	"context"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// PostRoot posts an incident's root message in channel, opens a thread on
// it named title, and returns the thread's conversation and the root's
// reference ("<channel>/<message>") for EditRoot (docs/design.md §19).
func (a *Adapter) PostRoot(ctx context.Context, channel, text, title string) (thread, root string, err error) {
	ch, msg, err := a.postInChannel(ctx, channel, text)
	if err != nil {
		return "", "", fmt.Errorf("discord: post an incident in %s: %w", channel, err)
	}
	id, err := a.startThread(ctx, channel, msg.ID, title, text)
	if err != nil {
		return "", "", fmt.Errorf("discord: open the incident's thread in %s: %w", channel, err)
	}
	return ConvKey(ch.GuildID, id), channel + "/" + msg.ID, nil
}

// EditRoot replaces the text of a root PostRoot posted.
func (a *Adapter) EditRoot(ctx context.Context, root, text string) error {
	channel, id, ok := strings.Cut(root, "/")
	if !ok || channel == "" || id == "" {
		return fmt.Errorf("discord: %q is not a root message reference (<channel>/<message>)", root)
	}
	err := withRetry(ctx, func() error {
		_, err := a.dg.ChannelMessageEdit(channel, id, text, discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		return fmt.Errorf("discord: edit the root message %s: %w", root, err)
	}
	return nil
}

// Say posts text in the conversation thread, in order with its runs'
// messages.
func (a *Adapter) Say(_ context.Context, thread, text string) error {
	if _, _, err := parseKey(thread); err != nil {
		return err
	}
	a.out.Say(thread, text)
	return nil
}
