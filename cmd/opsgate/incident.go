package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/timeline"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/memory/docs"
)

func (e *env) incident(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("incident", flag.ContinueOnError)
	var f timeline.Flags
	f.Register(fs)
	rest, code, ok := e.parseArgs(fs, args, timeline.Help, 2)
	if !ok {
		return code
	}
	if err := f.Check(rest); err != nil {
		return e.io().Usage(err, timeline.Help)
	}
	cfg, red, store, ok := e.openRedacted(ctx)
	if !ok {
		return exitError
	}
	defer store.Close()
	t, err := timeline.OfConversation(ctx, store, rest[1])
	if err == nil {
		t.Redact(red.String)
		if rest[0] == "postmortem" {
			ds, ok := store.(docs.Store)
			if !ok {
				return e.fail(errors.New("memory: this store keeps no memory documents"))
			}
			saver := memory.PostmortemSaver{Memory: memoryOver(cfg, ds, red)}
			newM := func() (core.Model, error) { return newModel(cfg) }
			err = timeline.WritePostmortem(ctx, e.stdout, newM, saver, terminal.LocalUser(e.getenv), t, red.String)
		} else {
			err = timeline.Report(e.stdout, t, f.Format)
		}
	}
	if err != nil {
		return e.fail(err)
	}
	return exitOK
}

// chatCommands are the chat commands that are not runs: memory's
// (/remember, /memory, /forget) when memory is on, and the timeline's
// (/timeline, /postmortem) when the store keeps timelines.
func chatCommands(store core.Store, model core.Model, mem *memory.Memory, log *slog.Logger) core.Commands {
	var cs core.CommandChain
	if mem != nil {
		cs = append(cs, mem)
	}
	if src, ok := timeline.FromStore(store); ok {
		tc := &timeline.Commands{Source: src, Model: model, Logger: log.With("component", "timeline")}
		if mem != nil {
			tc.Saver = memory.PostmortemSaver{Memory: mem}
		}
		cs = append(cs, tc)
	}
	if len(cs) == 0 {
		return nil
	}
	return cs
}
