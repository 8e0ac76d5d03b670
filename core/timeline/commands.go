package timeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Saver keeps a postmortem draft in memory and returns its path and id
// (cmd/opsgate answers it with memory.Memory.SavePostmortem).
type Saver interface {
	SavePostmortem(ctx context.Context, convKey string, by core.Actor, t Timeline, d Draft) (path, id string, err error)
}

// Commands answers /timeline and /postmortem in chat (core.Commands).
type Commands struct {
	Source Source
	// Model drafts postmortems; Saver keeps them. Without either,
	// /postmortem says it is not available.
	Model  core.Model
	Saver  Saver
	Logger *slog.Logger
	// Timeout bounds the model's draft; default 2 minutes.
	Timeout time.Duration
}

var _ core.Commands = (*Commands)(nil)

// Command answers /timeline and /postmortem, also in Telegram's
// "/cmd@bot" form; other text is not its command.
func (c *Commands) Command(ctx context.Context, call core.CommandCall) (string, bool) {
	name, _, _ := strings.Cut(strings.TrimSpace(call.Text), " ")
	name, _, _ = strings.Cut(strings.ToLower(strings.TrimSpace(name)), "@")
	switch name {
	case "/timeline":
		t, err := Build(ctx, c.Source, call.ConvKey, "")
		if err != nil {
			return c.failed(call, "/timeline", err), true
		}
		return t.Short(), true
	case "/postmortem":
		return c.postmortem(ctx, call), true
	}
	return "", false
}

func (c *Commands) postmortem(ctx context.Context, call core.CommandCall) string {
	if c.Model == nil || c.Saver == nil {
		return "⚠️ /postmortem is not available here: it needs a model and long-term memory."
	}
	if call.Defer != nil {
		// The model may take a minute; the adapter waiting for Handle
		// must not.
		call.Defer(func(ctx context.Context) string { return c.draft(ctx, call) })
		return ""
	}
	return c.draft(ctx, call)
}

// draft builds the timeline, asks the model for the draft, keeps it and
// returns the answer to post.
func (c *Commands) draft(ctx context.Context, call core.CommandCall) string {
	t, err := Build(ctx, c.Source, call.ConvKey, "")
	if err != nil {
		return c.failed(call, "/postmortem", err)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	mctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d, err := Postmortem(mctx, c.Model, t)
	if err != nil {
		return c.failed(call, "/postmortem", err)
	}
	path, id, err := c.Saver.SavePostmortem(ctx, call.ConvKey, call.User, t, d)
	if err != nil {
		c.logger().Warn("postmortem draft not saved", "conv", call.ConvKey, "err", err)
		return fmt.Sprintf("📝 *%s* (draft)\n\n%s\n\n⚠️ Not saved to memory: %v.", d.Title, d.Content, err)
	}
	return fmt.Sprintf("📝 *%s* (draft)\n\n%s\n\n%s", d.Title, d.Content, SavedNote(path, id))
}

// SavedNote says where a postmortem draft was kept and how it is promoted.
func SavedNote(path, id string) string {
	return fmt.Sprintf("Saved as a postmortem draft: `%s` (channel memory, agent_draft, id %s). "+
		"An admin promotes it to workspace memory with the promotion card (ask me to propose `%s` for the workspace) "+
		"or `opsgate memory promote %s`.", path, id, path, id)
}

func (c *Commands) failed(call core.CommandCall, cmd string, err error) string {
	if errors.Is(err, ErrEmpty) {
		return "Nothing is recorded in this conversation yet."
	}
	c.logger().Error("timeline command failed", "command", cmd, "conv", call.ConvKey, "err", err)
	return "⚠️ " + cmd + " failed: " + err.Error() + ". Nothing was changed; try again later."
}

func (c *Commands) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.Default()
	}
	return c.Logger
}
