package discord

import (
	"context"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
)

// Discord's limits (docs/design.md §6).
const (
	maxContent       = 2000 // characters of a message's content
	maxCustomID      = 100  // bytes of a button's custom_id
	maxButtonLabel   = 80
	minEditInterval  = 1200 * time.Millisecond // 5 edits per 5 s per channel, with room
	firstSendDelay   = 400 * time.Millisecond
	channelWrites    = 5
	channelWindow    = 5 * time.Second
	channelWindowPad = 100 * time.Millisecond // the clocks of two hosts are not one clock
)

// DefaultLimits are the render limits of Discord.
var DefaultLimits = render.Limits{
	MaxText:           maxContent,
	MinEditInterval:   minEditInterval,
	FirstSendDebounce: firstSendDelay,
	MaxButtonData:     maxCustomID,
}

// noMentions keeps anything the model writes ("@everyone", "<@id>") from
// pinging anyone.
var noMentions = &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}

// platform is render.Platform over the Discord REST API: a conversation
// key names the channel (a thread, or a DM) to post in.
type platform struct {
	dg     *discordgo.Session
	limits render.Limits
	writes *window
}

var (
	_ render.Platform = (*platform)(nil)
	_ render.Typer    = (*platform)(nil)
)

func newPlatform(dg *discordgo.Session, l render.Limits) *platform {
	return &platform{dg: dg, limits: l, writes: newWindow(channelWrites, channelWindow+channelWindowPad)}
}

func (p *platform) Limits() render.Limits { return p.limits }

// Post implements render.Platform.
func (p *platform) Post(ctx context.Context, conv string, m render.Message) (render.MsgRef, error) {
	_, ch, err := parseKey(conv)
	if err != nil {
		return "", render.Rejected(err)
	}
	if err := p.writes.wait(ctx, ch); err != nil {
		return "", err
	}
	msg, err := p.dg.ChannelMessageSendComplex(ch, &discordgo.MessageSend{
		Content:         content(m),
		Components:      components(m.Buttons),
		AllowedMentions: noMentions,
	}, discordgo.WithContext(ctx))
	if err != nil {
		return "", classify("post message", err)
	}
	return render.MsgRef(msg.ID), nil
}

// Edit implements render.Platform. Discord answers an edit that changes
// nothing with success, as render wants.
func (p *platform) Edit(ctx context.Context, conv string, ref render.MsgRef, m render.Message) error {
	_, ch, err := parseKey(conv)
	if err != nil {
		return render.Rejected(err)
	}
	if err := p.writes.wait(ctx, ch); err != nil {
		return err
	}
	text := content(m)
	comps := components(m.Buttons)
	_, err = p.dg.ChannelMessageEditComplex(&discordgo.MessageEdit{
		ID: string(ref), Channel: ch,
		Content: &text, Components: &comps, AllowedMentions: noMentions,
	}, discordgo.WithContext(ctx))
	if err != nil {
		return classify("edit message", err)
	}
	return nil
}

// Typing implements render.Typer.
func (p *platform) Typing(ctx context.Context, conv string) error {
	_, ch, err := parseKey(conv)
	if err != nil {
		return err
	}
	if err := p.dg.ChannelTyping(ch, discordgo.WithContext(ctx)); err != nil {
		return classify("typing", err)
	}
	return nil
}

// content is what Discord shows for m. Discord renders the Markdown models
// write (bold, italics, code, fences, links, headings) as it is, and never
// rejects formatting, so the text goes out unchanged; Plain text is
// escaped when the escapes still fit.
func content(m render.Message) string {
	text := m.Text
	if m.Plain {
		if esc := escapeMarkdown(text); render.Len(esc) <= maxContent {
			text = esc
		}
	}
	if strings.TrimSpace(text) == "" {
		return "…" // Discord refuses an empty message
	}
	// Render never asks for more; if it ever did, a cut message beats a
	// refused one.
	return core.Truncate(text, maxContent, core.UTF16)
}

var markdownEscaper = strings.NewReplacer(
	`\`, `\\`, "*", `\*`, "_", `\_`, "~", `\~`, "`", "\\`", "|", `\|`, ">", `\>`, "#", `\#`, "[", `\[`, "]", `\]`,
)

func escapeMarkdown(s string) string { return markdownEscaper.Replace(s) }

// components returns the buttons as one action row; an empty slice (not
// nil) removes a message's buttons on edit.
func components(bs []render.Button) []discordgo.MessageComponent {
	out := []discordgo.MessageComponent{}
	if len(bs) == 0 {
		return out
	}
	row := discordgo.ActionsRow{}
	for i, b := range bs {
		if i == 5 {
			break // Discord's limit per row; render shows at most three
		}
		style := discordgo.SecondaryButton
		switch b.Style {
		case render.StylePrimary:
			style = discordgo.SuccessButton
		case render.StyleDanger:
			style = discordgo.DangerButton
		}
		label := b.Label
		if r := []rune(label); len(r) > maxButtonLabel {
			label = string(r[:maxButtonLabel])
		}
		row.Components = append(row.Components, discordgo.Button{Label: label, Style: style, CustomID: b.Data})
	}
	return append(out, row)
}
