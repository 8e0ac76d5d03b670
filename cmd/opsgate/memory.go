package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/internal/tokens"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/memory/memorycli"
	"github.com/opsgate/opsgate/policy/redact"
)

func (e *env) memory(ctx context.Context, args []string) int {
	var f memorycli.Flags
	fs := flag.NewFlagSet("memory", flag.ContinueOnError)
	fs.BoolVar(&f.Explain, "explain", false, "search: show each score component")
	fs.StringVar(&f.Conversation, "conversation", "", "search: as this conversation sees memory")
	fs.StringVar(&f.Person, "person", "", "search: the person asking (with --conversation)")
	fs.IntVar(&f.Limit, "limit", 6, "search: how many documents")
	fs.StringVar(&f.Scope, "scope", "", "list, show: the scope")
	fs.StringVar(&f.Type, "type", "", "list: only this type")
	fs.StringVar(&f.Status, "status", "", "list: only this status")
	fs.StringVar(&f.Dir, "dir", "", "export: write Markdown files here instead of JSON Lines to stdout")
	rest, code, ok := e.parseArgs(fs, args, memorycli.Help, 64)
	if !ok {
		return code
	}
	if len(rest) == 0 {
		fmt.Fprint(e.stderr, memorycli.Help)
		return exitUsage
	}
	cmd, rest := rest[0], rest[1:]
	if n, fixed := memorycli.Args[cmd]; fixed && len(rest) != n {
		fmt.Fprintf(e.stderr, "opsgate memory %s: want %d argument(s), got %q\n\n%s", cmd, n, rest, memorycli.Help)
		return exitUsage
	}
	if cmd == "search" && len(rest) == 0 {
		fmt.Fprintf(e.stderr, "opsgate memory search: want a QUERY\n\n%s", memorycli.Help)
		return exitUsage
	}
	if _, fixed := memorycli.Args[cmd]; !fixed && cmd != "search" {
		fmt.Fprintf(e.stderr, "opsgate memory: unknown subcommand %q\n\n%s", cmd, memorycli.Help)
		return exitUsage
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	m, closeStore, err := e.openMemory(ctx, cfg)
	if err != nil {
		e.fail(err)
		return exitError
	}
	defer closeStore()
	return memorycli.Command{IO: e.io(), Memory: m, By: terminal.LocalUser(e.getenv).ID}.Run(ctx, cmd, rest, f)
}

// openMemory opens the store of store.url (migrated as serve would) and
// the memory over it, scanning writes with the configured detectors.
func (e *env) openMemory(ctx context.Context, cfg *config.Config) (*memory.Memory, func(), error) {
	red, err := newRedactor(cfg)
	if err != nil {
		return nil, nil, err
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	ds, ok := store.(docs.Store)
	if !ok {
		store.Close()
		return nil, nil, errors.New("memory: this store keeps no memory documents")
	}
	return memoryOver(cfg, ds, red), func() { store.Close() }, nil
}

// memoryOver is long-term memory over ds, scanning writes with red.
func memoryOver(cfg *config.Config, ds docs.Store, red *redact.Redactor) *memory.Memory {
	return memory.New(ds, memory.Options{Secrets: red.String, Tokens: tokens.Count, MaxDocBytes: cfg.Memory.MaxDocBytes, MinScore: minScore(cfg)})
}
