package discord

import (
	"context"
	"errors"
	"time"

	"github.com/bwmarrin/discordgo"
)

// Reconnection backoff: immediately, then doubling up to a minute.
const (
	firstBackoff = time.Second
	maxBackoff   = time.Minute
)

// connect opens the gateway, retrying until it works, ctx ends, or Discord
// refuses the bot for good. After the first connection, discordgo resumes
// the session (op 6 Resume with the last sequence number), so Discord
// replays what was dispatched while the connection was down; duplicates
// are dropped by the seen set and by the engine's inbound dedupe.
func (a *Adapter) connect(ctx context.Context) error {
	backoff := firstBackoff
	for {
		err := a.dg.Open()
		if err == nil || errors.Is(err, discordgo.ErrWSAlreadyOpen) {
			return nil
		}
		if f := fatal(err); f != nil {
			return f
		}
		a.log.Warn("gateway connection failed; retrying", "err", err, "in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// supervise reconnects after every dropped connection until ctx ends.
// discordgo's own reconnect loop is off: it would keep reconnecting after
// Run returned.
func (a *Adapter) supervise(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-a.dropped:
		}
		if ctx.Err() != nil {
			return nil
		}
		a.log.Warn("gateway connection lost; reconnecting")
		if err := a.connect(ctx); err != nil {
			return err
		}
	}
}

func (a *Adapter) onReady(_ *discordgo.Session, r *discordgo.Ready) {
	a.mu.Lock()
	if r.User != nil {
		a.botID = r.User.ID
	}
	if a.appID == "" && r.Application != nil {
		a.appID = r.Application.ID
	}
	a.mu.Unlock()
	name := ""
	if r.User != nil {
		name = r.User.Username
	}
	a.log.Info("connected to the Discord gateway", "bot", name, "guilds", len(r.Guilds))
}

func (a *Adapter) onResumed(_ *discordgo.Session, _ *discordgo.Resumed) {
	a.log.Info("gateway session resumed")
}

func (a *Adapter) onDisconnect(_ *discordgo.Session, _ *discordgo.Disconnect) {
	select {
	case a.dropped <- struct{}{}:
	default:
	}
}
