package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/opsgate/opsgate/adapters/terminal"
)

// shutdownTimeout bounds waiting for runs and event delivery on exit.
const shutdownTimeout = 10 * time.Second

func (e *env) chat(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	message := fs.String("m", "", "send one message and exit")
	resume := fs.Bool("resume", false, "continue the most recent terminal conversation")
	named := fs.String("conversation", "", "continue or start the conversation NAME")
	if code, ok := e.parse(fs, args, terminal.ChatHelp); !ok {
		return code
	}
	if *resume && *named != "" {
		fmt.Fprintf(e.stderr, "opsgate chat: --resume and --conversation cannot be used together\n\n%s", terminal.ChatHelp)
		return exitUsage
	}
	if *named != "" {
		if err := terminal.CheckConvName(*named); err != nil {
			fmt.Fprintf(e.stderr, "opsgate chat: --conversation: %v\n", err)
			return exitUsage
		}
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	e.warnUnknownEnv()
	interactive := terminal.IsTerminal(e.stdin) && terminal.IsTerminal(e.stdout)
	who := terminal.LocalUser(e.getenv)
	a, err := openApp(ctx, cfg, e.log, nil)
	if err != nil {
		return e.fail(err)
	}
	conv, err := terminal.ChooseConversation(ctx, a.engine.ConversationKeys, who.Name, *resume, *named)
	if err != nil {
		e.fail(err)
		sctx, scancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer scancel()
		_ = a.shutdown(sctx)
		return exitError
	}
	interrupted, err := terminal.Session{
		In: e.stdin, Out: e.stdout, Err: e.stderr,
		Interactive: interactive,
		Color:       interactive && e.getenv("NO_COLOR") == "" && e.getenv("TERM") != "dumb",
		User:        who, Conv: conv, Engine: a.engine, Logger: e.log, Message: *message,
		Greeting: fmt.Sprintf("opsgate %s · %s at %s · toolsets: %s", version, cfg.LLM.Model, cfg.LLM.BaseURL, joinOr(serverNames(cfg), "none")),
	}.Run(ctx)
	sctx, scancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer scancel()
	if serr := a.shutdown(sctx); serr != nil {
		e.log.Warn("shutdown", "err", serr)
	}
	switch {
	case interrupted && errors.Is(err, context.Canceled):
		return exitInterrupted
	case err != nil: // terminal.ErrUnanswered, ErrRunFailed and ErrLineTooLong included
		return e.fail(err)
	}
	return exitOK
}
