package discord

import (
	"context"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
)

// handleTimeout bounds the handling of one event (lookups, a thread, the
// engine storing the message); the run itself goes on in the background.
const handleTimeout = time.Minute

// autoArchive is how long an idle incident thread stays in the channel
// list, in minutes (a day).
const autoArchive = 1440

// onMessage queues a gateway message for its channel's worker. It runs on
// discordgo's reading goroutine, so it does nothing slow.
func (a *Adapter) onMessage(_ *discordgo.Session, mc *discordgo.MessageCreate) {
	m := mc.Message
	if m == nil || m.Author == nil || m.Author.Bot {
		return // the bot's own messages, and other bots': no loops
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return // system messages (thread created, pins, joins)
	}
	if !a.seen.first("m" + m.ID) {
		return
	}
	if !a.track() {
		return
	}
	a.queues.push(m.ChannelID, func() {
		defer a.work.Done()
		ctx, cancel := context.WithTimeout(a.ctx, handleTimeout)
		defer cancel()
		a.handleMessage(ctx, m)
	})
}

// handleMessage routes a message: a DM from an allowed user, a message in
// one of the bot's incident threads, or a mention in an allowed channel
// (which opens a thread). Anything else is ignored; a mention outside the
// allowlists gets a short refusal and runs nothing.
func (a *Adapter) handleMessage(ctx context.Context, m *discordgo.Message) {
	user := actorOf(m.Author)
	bot := a.bot()
	text := stripMentions(m.Content, bot)
	if m.GuildID == "" {
		key := ConvKey("", m.ChannelID)
		if !a.cfg.allowsDM(m.Author.ID) {
			a.log.Info("direct message from a user not in discord.allowed_users refused", "user", m.Author.ID)
			a.out.Say(key, textNotAllowed)
			return
		}
		a.deliver(ctx, key, m.ID, user, text, m.Timestamp)
		return
	}
	mentioned := mentions(m, bot)
	if !a.cfg.allowsGuild(m.GuildID) {
		a.refuse(m, mentioned)
		return
	}
	pl, err := a.place(ctx, m.ChannelID)
	if err != nil {
		a.log.Warn("message in an unknown channel ignored", "channel", m.ChannelID, "err", err)
		if mentioned {
			a.out.Say(ConvKey(m.GuildID, m.ChannelID), textLookupFailed)
		}
		return
	}
	if !a.cfg.allowsPlace(m.GuildID, pl.root(m.ChannelID)) {
		a.refuse(m, mentioned)
		return
	}
	switch {
	case pl.thread && (pl.owner == bot || mentioned):
		// An incident thread continues without a mention; in somebody
		// else's thread the bot answers when it is called.
		a.deliver(ctx, ConvKey(m.GuildID, m.ChannelID), m.ID, user, text, m.Timestamp)
	case !pl.thread && mentioned:
		a.openThread(ctx, m, user, text)
	}
}

// refuse answers a mention outside the allowlists with a short refusal;
// anything else there is ignored.
func (a *Adapter) refuse(m *discordgo.Message, mentioned bool) {
	if mentioned {
		a.log.Info("mention outside discord.guilds/discord.channels refused", "guild", m.GuildID, "channel", m.ChannelID)
		a.out.Say(ConvKey(m.GuildID, m.ChannelID), textNotHere)
	}
}

// openThread starts an incident thread on the message that asked and runs
// the request in it.
func (a *Adapter) openThread(ctx context.Context, m *discordgo.Message, user core.Actor, text string) {
	if text == "" {
		a.out.Say(ConvKey(m.GuildID, m.ChannelID), textEmpty)
		return
	}
	thread, err := a.startThread(ctx, m.ChannelID, m.ID, text, text)
	if err != nil {
		a.log.Error("start thread", "channel", m.ChannelID, "message", m.ID, "err", err)
		a.out.Say(ConvKey(m.GuildID, m.ChannelID), textNoThread)
		return
	}
	a.deliver(ctx, ConvKey(m.GuildID, thread), m.ID, user, text, m.Timestamp)
}

// startThread starts a thread named after title on a message and returns
// its id; origin is the text the thread is for (the request, or the
// message it hangs from), whose conversation's start title leaves the
// name as it is (titles.go). A thread started from a message has the
// message's id, so when Discord says one exists already (the message was
// sent again after a reconnect) that is the thread.
func (a *Adapter) startThread(ctx context.Context, channel, message, title, origin string) (string, error) {
	name := threadName(title)
	var th *discordgo.Channel
	err := withRetry(ctx, func() error {
		var err error
		th, err = a.dg.MessageThreadStartComplex(channel, message, &discordgo.ThreadStart{
			Name: name, AutoArchiveDuration: autoArchive,
		}, discordgo.WithContext(ctx))
		return err
	})
	id := message
	switch {
	case err == nil:
		id = th.ID
	case apiCode(err) != codeThreadExists:
		return "", err
	}
	a.places.put(id, place{thread: true, parent: channel, owner: a.bot()})
	a.names.started(id, name, origin)
	return id, nil
}

// deliver hands a message to the engine. "stop" stops the run at once,
// whatever the queue mode.
func (a *Adapter) deliver(ctx context.Context, key, id string, user core.Actor, text string, at time.Time) {
	if text == "" {
		a.out.Say(key, textEmpty)
		return
	}
	eng := a.engineOf()
	if isStopWord(text) {
		if !eng.Stop(ctx, key) {
			a.out.Say(key, textNothingToStop)
		}
		return
	}
	err := eng.Handle(ctx, core.Inbound{ConvKey: key, MessageID: id, User: user, Text: text, Time: at})
	if reply, refused := render.RefusalReply(err); refused {
		a.out.Say(key, reply)
		return
	}
	if err != nil {
		a.log.Error("engine did not take a message", "conv", key, "message", id, "err", err)
		a.out.Say(key, textNotTaken)
	}
}

func actorOf(u *discordgo.User) core.Actor {
	if u == nil {
		return core.Actor{}
	}
	return core.Actor{ID: u.ID, Name: "@" + u.Username}
}

// mentions reports whether m mentions the bot.
func mentions(m *discordgo.Message, bot string) bool {
	if bot == "" {
		return false
	}
	for _, u := range m.Mentions {
		if u != nil && u.ID == bot {
			return true
		}
	}
	return strings.Contains(m.Content, "<@"+bot+">") || strings.Contains(m.Content, "<@!"+bot+">")
}
