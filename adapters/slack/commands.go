package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
	"github.com/slack-go/slack"
)

const helpText = `*opsgate* works your infrastructure with you, and changes nothing until an authorised person presses Approve.
• ` + "`/opsgate <request>`" + ` starts a conversation in a new thread
• mention me in a channel to start one on your message; reply in my threads without mentioning me
• ` + "`/opsgate status`" + ` shows what is running in this channel
• ` + "`/opsgate stop`" + ` stops everything running in this channel; say ` + "`stop`" + ` in a thread (or press Stop) to stop just that one
• ` + "`/opsgate remember <text>`" + `, ` + "`/opsgate memory <query>`" + `, ` + "`/opsgate forget <path>`" + ` keep, search and archive memory notes (in a thread: mention me with ` + "`/remember …`" + `)
• in a thread, mention me with ` + "`/timeline`" + ` for what happened so far (UTC), or ` + "`/postmortem`" + ` for a postmortem draft kept in this channel's memory`

// commandReply is the immediate answer to a slash command (the HTTP
// response or the Socket Mode ack payload).
type commandReply struct {
	ResponseType string `json:"response_type"`
	Text         string `json:"text"`
}

func private(text string) *commandReply {
	return &commandReply{ResponseType: "ephemeral", Text: text}
}

// command handles "/opsgate …". It returns the immediate answer, if any,
// and the work to do once the command is acknowledged, if any; neither
// does I/O, so the ack is never late.
func (a *Adapter) command(cmd slack.SlashCommand) (*commandReply, func(context.Context)) {
	text := strings.TrimSpace(cmd.Text)
	word, _, _ := strings.Cut(text, " ")
	word = strings.ToLower(strings.TrimRight(word, ".!"))
	if word == "" || word == "help" {
		return private(helpText), nil
	}
	if reason := a.refusal(cmd.ChannelID, cmd.UserID); reason != "" {
		return private(reason), nil
	}
	switch word {
	case "stop", "/stop":
		// The emergency brake wins over a request that starts with "stop".
		return nil, func(ctx context.Context) { a.stopChannel(ctx, cmd) }
	case "status":
		return nil, func(ctx context.Context) { a.status(ctx, cmd) }
	case "remember", "memory", "forget":
		// Memory commands go to the engine as "/remember …" (docs/design.md §14),
		// answered in a thread like any request.
		cmd.Text = "/" + text
	}
	return nil, func(ctx context.Context) { a.ask(ctx, cmd) }
}

// ask posts the visible root message of a request and runs it in its
// thread.
func (a *Adapter) ask(ctx context.Context, cmd slack.SlashCommand) {
	me, err := a.identify(ctx)
	eng := a.getEngine()
	if err != nil || eng == nil {
		a.log.Error("slash command dropped", "err", err, "engine", eng != nil)
		a.respond(ctx, cmd, "⚠️ opsgate is not ready yet; try again in a moment.")
		return
	}
	text := inboundText(cmd.Text, me.userID)
	root := fmt.Sprintf("<@%s> asked: %s", cmd.UserID, escape(text))
	var ts string
	err = a.call(ctx, cmd.ChannelID, func(ctx context.Context) error {
		var err error
		_, ts, err = a.api.PostMessageContext(ctx, cmd.ChannelID, slack.MsgOptionText(root, false),
			slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl())
		return err
	})
	if err != nil {
		a.log.Warn("slash command: root message not posted", "channel", cmd.ChannelID, "err", err)
		a.respond(ctx, cmd, "⚠️ I could not post in this channel (is opsgate a member? `/invite @opsgate`): "+escape(err.Error()))
		return
	}
	a.known.set(cmd.ChannelID, ts, true)
	key := ConvKey(me.teamID, cmd.ChannelID, ts)
	in := core.Inbound{ConvKey: key, MessageID: ts, User: a.actor(ctx, cmd.UserID, cmd.UserName), Text: text, Time: tsTime(ts)}
	err = eng.Handle(ctx, in)
	if reply, refused := render.RefusalReply(err); refused {
		a.sender.Say(key, reply)
		return
	}
	if err != nil {
		a.log.Error("engine refused a slash command", "conv", key, "err", err)
		a.sender.Say(key, "⚠️ I could not start: "+err.Error())
	}
}

// stopChannel stops every run going or paused in the channel: slash
// commands come without a thread.
func (a *Adapter) stopChannel(ctx context.Context, cmd slack.SlashCommand) {
	eng := a.getEngine()
	if eng == nil {
		a.respond(ctx, cmd, "⚠️ opsgate is not ready yet.")
		return
	}
	n := 0
	for _, key := range a.sender.convsIn(cmd.ChannelID) {
		if eng.Stop(ctx, key) {
			n++
		}
	}
	if n == 0 {
		a.respond(ctx, cmd, "Nothing is running in this channel.")
		return
	}
	a.respond(ctx, cmd, stoppedText(n))
}

// status lists the channel's conversations with a run going or paused.
func (a *Adapter) status(ctx context.Context, cmd slack.SlashCommand) {
	eng := a.getEngine()
	me, err := a.identify(ctx)
	if eng == nil || err != nil {
		a.respond(ctx, cmd, "⚠️ opsgate is not ready yet.")
		return
	}
	var lines []string
	for _, key := range a.sender.convsIn(cmd.ChannelID) {
		st, err := eng.Status(ctx, key)
		if err != nil {
			a.log.Warn("status", "conv", key, "err", err)
			continue
		}
		var parts []string
		if r := st.ActiveRun; r != nil {
			parts = append(parts, "running for "+time.Since(r.StartedAt).Round(time.Second).String())
		}
		if st.Queued > 0 {
			parts = append(parts, fmt.Sprintf("%d queued", st.Queued))
		}
		for _, ap := range st.PendingApprovals {
			parts = append(parts, "waiting for approval of `"+escape(ap.Tool)+"` (asked by "+escape(ap.Requester.String())+")")
		}
		if len(parts) == 0 {
			continue
		}
		_, ch, thread, _ := parseKey(key)
		lines = append(lines, "• "+threadLink(me.url, ch, thread)+": "+strings.Join(parts, ", "))
	}
	if len(lines) == 0 {
		a.respond(ctx, cmd, "Nothing is running in this channel.")
		return
	}
	a.respond(ctx, cmd, strings.Join(lines, "\n"))
}

// threadLink links to a thread in the workspace.
func threadLink(workspace, channel, thread string) string {
	if workspace == "" || thread == "" {
		return "thread " + thread
	}
	return "<" + strings.TrimSuffix(workspace, "/") + "/archives/" + channel + "/p" + strings.ReplaceAll(thread, ".", "") + "|thread>"
}

// respond answers a slash command privately through its response_url,
// which works even where the bot is not a member; failing that, with an
// ephemeral message.
func (a *Adapter) respond(ctx context.Context, cmd slack.SlashCommand, text string) {
	if cmd.ResponseURL != "" {
		err := a.postResponse(ctx, cmd.ResponseURL, private(text))
		if err == nil {
			return
		}
		a.log.Warn("response_url failed; answering with an ephemeral message", "err", err)
	}
	a.ephemeral(ctx, cmd.ChannelID, cmd.UserID, "", text)
}

func (a *Adapter) postResponse(ctx context.Context, url string, reply *commandReply) error {
	body, err := json.Marshal(reply)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("slack: response_url: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		return fmt.Errorf("slack: response_url: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("slack: response_url: HTTP %d", resp.StatusCode)
	}
	return nil
}
