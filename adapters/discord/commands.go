package discord

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/opsgate/opsgate/core"
)

// The slash command. Discord does not let a command take both options and
// subcommands, so the request is a subcommand with a text option:
// /opsgate request text:…, /opsgate stop, /opsgate status.
const (
	commandName = "opsgate"
	subRequest  = "request"
	subStop     = "stop"
	subStatus   = "status"
	optText     = "text"
)

func slashCommand() *discordgo.ApplicationCommand {
	// Guilds and DMs with the bot: what dm_permission true said before
	// Discord replaced it with contexts.
	contexts := []discordgo.InteractionContextType{discordgo.InteractionContextGuild, discordgo.InteractionContextBotDM}
	return &discordgo.ApplicationCommand{
		Name:        commandName,
		Description: "Ask opsgate for help with an incident",
		Contexts:    &contexts,
		Options: []*discordgo.ApplicationCommandOption{
			{
				Type: discordgo.ApplicationCommandOptionSubCommand, Name: subRequest,
				Description: "Open an incident thread and ask opsgate",
				Options: []*discordgo.ApplicationCommandOption{{
					Type: discordgo.ApplicationCommandOptionString, Name: optText, Required: true,
					Description: "What do you need? e.g. why are the web pods restarting?", MaxLength: 1900,
				}},
			},
			{Type: discordgo.ApplicationCommandOptionSubCommand, Name: subStop, Description: "Stop what opsgate is doing in this thread"},
			{Type: discordgo.ApplicationCommandOptionSubCommand, Name: subStatus, Description: "Show what opsgate is doing in this thread"},
		},
	}
}

// registerCommands registers /opsgate in the configured guilds (at once)
// or globally (Discord may take a while to show it everywhere). Failing
// is not fatal: mentions and threads work without it.
func (a *Adapter) registerCommands(ctx context.Context) {
	a.mu.Lock()
	app := a.appID
	a.mu.Unlock()
	if app == "" {
		a.log.Warn("no application id (discord.application_id): the /opsgate command is not registered")
		return
	}
	guilds := a.cfg.commandGuilds()
	if guilds == nil {
		guilds = []string{""}
	}
	for _, g := range guilds {
		err := withRetry(ctx, func() error {
			_, err := a.dg.ApplicationCommandBulkOverwrite(app, g, []*discordgo.ApplicationCommand{slashCommand()},
				discordgo.WithContext(ctx))
			return err
		})
		if err != nil {
			a.log.Warn("register the /opsgate command (invite the bot with the applications.commands scope)", "guild", g, "err", err)
		}
	}
}

// commandArgs returns the subcommand and its text. A top-level "request"
// option is read too, for a command registered that way by hand.
func commandArgs(d discordgo.ApplicationCommandInteractionData) (sub, text string) {
	for _, o := range d.Options {
		switch o.Type {
		case discordgo.ApplicationCommandOptionSubCommand:
			sub = o.Name
			for _, so := range o.Options {
				if so.Name == optText && so.Type == discordgo.ApplicationCommandOptionString {
					text = so.StringValue()
				}
			}
		case discordgo.ApplicationCommandOptionString:
			if o.Name == subRequest {
				sub, text = subRequest, o.StringValue()
			}
		}
	}
	return sub, strings.TrimSpace(text)
}

// handleCommand answers /opsgate: it is acknowledged at once (status
// privately), then answered by editing that response.
func (a *Adapter) handleCommand(ctx context.Context, i *discordgo.Interaction) {
	d := i.ApplicationCommandData()
	if d.Name != commandName {
		return
	}
	sub, text := commandArgs(d)
	user := interactionUser(i)
	// Requests and stops are answered for the channel to see; status and
	// refusals only for the person who asked.
	private := sub != subRequest && sub != subStop || a.surelyRefused(i, user)
	if a.ack(ctx, i, discordgo.InteractionResponseDeferredChannelMessageWithSource, private) != nil {
		return
	}
	pl, allowed, err := a.mayTalk(ctx, i, user)
	switch {
	case err != nil:
		a.answer(ctx, i, textLookupFailed)
		return
	case !allowed && i.GuildID == "":
		a.answer(ctx, i, textNotAllowed)
		return
	case !allowed:
		a.log.Info("command outside discord.guilds/discord.channels refused", "guild", i.GuildID, "channel", i.ChannelID)
		a.answer(ctx, i, textNotHere)
		return
	}
	key := ConvKey(i.GuildID, i.ChannelID)
	switch sub {
	case subRequest:
		a.commandRequest(ctx, i, pl, user, text)
	case subStop:
		if a.engineOf().Stop(ctx, key) {
			a.answer(ctx, i, "⏹ Stopped by <@"+user.ID+">.")
		} else {
			a.answer(ctx, i, textNothingToStop)
		}
	case subStatus:
		st, err := a.engineOf().Status(ctx, key)
		if err != nil {
			a.log.Error("status", "conv", key, "err", err)
			a.answer(ctx, i, "⚠️ I could not read the status. Please try again.")
			return
		}
		a.answer(ctx, i, statusText(st, time.Now()))
	default:
		a.answer(ctx, i, "Unknown subcommand: use /opsgate request, /opsgate stop or /opsgate status.")
	}
}

// commandRequest runs a request. In a channel the response becomes the
// head of a new incident thread; in a thread or a DM the run happens
// right there.
func (a *Adapter) commandRequest(ctx context.Context, i *discordgo.Interaction, pl place, user core.Actor, text string) {
	if text == "" {
		a.answer(ctx, i, textEmpty)
		return
	}
	quoted := "> " + strings.ReplaceAll(text, "\n", "\n> ")
	if i.GuildID == "" || pl.thread {
		if _, err := a.answer(ctx, i, "📝 <@"+user.ID+"> asked:\n"+quoted); err != nil {
			return
		}
		a.deliver(ctx, ConvKey(i.GuildID, i.ChannelID), i.ID, user, text, time.Now())
		return
	}
	head, err := a.answer(ctx, i, "🚨 **Incident request** from <@"+user.ID+">:\n"+quoted)
	if err != nil {
		return
	}
	thread, err := a.startThread(ctx, i.ChannelID, head.ID, text, text)
	if err != nil {
		a.log.Error("start thread", "channel", i.ChannelID, "err", err)
		a.answer(ctx, i, textNoThread)
		return
	}
	a.deliver(ctx, ConvKey(i.GuildID, thread), i.ID, user, text, time.Now())
}

// statusText describes a conversation for /opsgate status.
func statusText(st core.Status, now time.Time) string {
	var b strings.Builder
	if r := st.ActiveRun; r != nil {
		fmt.Fprintf(&b, "▶️ Run `%s` is %s", shortID(r.ID), strings.ReplaceAll(string(r.Status), "_", " "))
		if !r.StartedAt.IsZero() {
			fmt.Fprintf(&b, ", started %s ago", now.Sub(r.StartedAt).Round(time.Second))
		}
		if r.Iterations > 0 {
			fmt.Fprintf(&b, ", %d model calls", r.Iterations)
		}
		b.WriteString(".\n")
	} else {
		b.WriteString("💤 Nothing is running here.\n")
	}
	if st.Queued > 0 {
		fmt.Fprintf(&b, "📨 %d message(s) waiting.\n", st.Queued)
	}
	if len(st.PendingApprovals) > 0 {
		b.WriteString("🔐 Waiting for approval:\n")
		for _, ap := range st.PendingApprovals {
			fmt.Fprintf(&b, "• `%s` requested by %s, expires %s\n", ap.Tool, who(ap.Requester), ap.ExpiresAt.UTC().Format("15:04 MST"))
		}
	}
	return strings.TrimSpace(b.String())
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
