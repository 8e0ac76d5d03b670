package chats

import (
	"context"
	"log/slog"
	"strings"

	"github.com/opsgate/opsgate/core"
)

// LogChat is the schedule target "log": a fire's run is written to the log
// (and, as every run, to the audit log) instead of a chat. It owns the
// conversations "schedule:…"; route it with [Set.Route].
func LogChat(log *slog.Logger) Chat { return &logChat{log: log.With("adapter", "log")} }

type logChat struct{ log *slog.Logger }

func (*logChat) Platform() string                              { return "log" }
func (*logChat) Owns(key string) bool                          { return strings.HasPrefix(key, "schedule:") }
func (*logChat) Run(ctx context.Context, _ Engine) error       { <-ctx.Done(); return nil }
func (*logChat) Close() error                                  { return nil }
func (*logChat) Health() (bool, string)                        { return true, "writes to the log" }
func (c *logChat) Send(_ context.Context, ev core.Event) error { logEvent(c.log, ev); return nil }

func logEvent(log *slog.Logger, ev core.Event) {
	switch ev.Type {
	case core.EventGenerationComplete:
		log.Info("answer", "conv", ev.ConvKey, "run", ev.RunID, "text", ev.Text)
	case core.EventToolAwaitingApproval:
		if a := ev.Approval; a != nil {
			log.Warn("approval needed", "conv", ev.ConvKey, "tool", a.Tool, "approval", a.ID)
		}
	case core.EventToolResult, core.EventToolError:
		if c := ev.Call; c != nil {
			log.Info(string(ev.Type), "conv", ev.ConvKey, "tool", c.Name)
		}
	case core.EventWorkflowError:
		log.Error("run failed", "conv", ev.ConvKey, "run", ev.RunID, "err", ev.Text)
	}
}
