package main

import (
	"context"
	"errors"
	"flag"
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
	fs := flag.NewFlagSet("memory", flag.ContinueOnError)
	var f memorycli.Flags
	f.Register(fs)
	rest, code, ok := e.parseArgs(fs, args, memorycli.Help, 64)
	if !ok {
		return code
	}
	if err := memorycli.Check(rest); err != nil {
		return e.io().Usage(err, memorycli.Help)
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	m, closeStore, err := e.openMemory(ctx, cfg)
	if err != nil {
		return e.fail(err)
	}
	defer closeStore()
	return memorycli.Command{IO: e.io(), Memory: m, By: terminal.LocalUser(e.getenv).ID}.Run(ctx, rest[0], rest[1:], f)
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
