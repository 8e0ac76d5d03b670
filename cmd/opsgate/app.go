package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/opsgate/opsgate/adapters/chats/incidentthreads"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/llm"
	"github.com/opsgate/opsgate/core/schedule"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/internal/tokens"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/policy"
	"github.com/opsgate/opsgate/policy/redact"
)

// app is opsgate wired together: the store, the model, the tool host and
// the engine over them.
type app struct {
	cfg    *config.Config
	store  core.Store
	model  *llm.Client
	tools  *tools.Host
	engine *core.Engine
	// policy is the policy in force; serve reloads it on SIGHUP.
	policy *policy.Holder
	// red is the redactor of everything shown to people.
	red *redact.Redactor
	// coord is this replica's coordination with the others (nil: none).
	coord core.Coordinator
	// closeCoord ends this replica's coordination with the others.
	closeCoord func()
	// replicaLease is this process's liveness where no coordinator holds
	// it (takeReplicaLease).
	replicaLease core.Lease
	// memory is long-term memory; nil when memory.enabled is false.
	memory *memory.Memory
	// incidents is the intake of Alertmanager's notifications; nil when
	// none are configured.
	incidents *incidentthreads.Threads
}

type appOptions struct {
	replica string
	// storeOpening runs just before the store is opened, once everything
	// the configuration decides (model, tools, policy, redaction) has
	// loaded: a mistake there has stopped openApp before it runs.
	storeOpening func()
}

type appOption func(*appOptions)

// asReplica makes the engine share conversations with the other replicas
// on the store, when the store can (PostgreSQL), as replica name.
func asReplica(name string) appOption { return func(o *appOptions) { o.replica = name } }

// whileStoreOpens runs f as the store starts opening (appOptions.storeOpening).
func whileStoreOpens(f func()) appOption { return func(o *appOptions) { o.storeOpening = f } }

// newModel builds the LLM client; it touches no network.
func newModel(cfg *config.Config) (*llm.Client, error) {
	return llm.New(llm.Config{
		BaseURL:           cfg.LLM.BaseURL,
		APIKey:            cfg.LLM.APIKey,
		APIKeyOrigin:      cfg.APIKeyOrigin(),
		Model:             cfg.LLM.Model,
		ReasoningEffort:   cfg.LLM.ReasoningEffort,
		MaxTokens:         cfg.LLM.MaxTokens,
		RequestTimeout:    cfg.LLM.Timeout,
		StreamIdleTimeout: cfg.LLM.StreamIdleTimeout,
	})
}

// newTools builds the MCP tool host; it starts no server.
func newTools(cfg *config.Config, log *slog.Logger, opts ...tools.Option) (*tools.Host, error) {
	servers := make([]tools.ServerConfig, len(cfg.Tools.Servers))
	for i, s := range cfg.Tools.Servers {
		servers[i] = tools.ServerConfig{
			Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env,
			URL: s.URL, Headers: s.Headers, CallTimeout: s.CallTimeout,
			Annotations: tools.Annotations{Read: s.Annotations.Read, Destructive: s.Annotations.Destructive},
		}
	}
	base := []tools.Option{tools.WithLogger(log.With("component", "tools")), tools.WithCallTimeout(cfg.Tools.CallTimeout)}
	return tools.New(servers, append(base, opts...)...)
}

// engineConfig maps the configuration onto the engine's.
func engineConfig(cfg *config.Config) core.Config {
	return core.Config{
		SystemPrompt:          systemPrompt(cfg.Tools.DefaultToolsets, serverNames(cfg)),
		MaxIterations:         cfg.LLM.MaxIterations,
		ContextWindowMessages: cfg.LLM.ContextWindowMessages,
		QueueMode:             core.QueueMode(cfg.Session.QueueMode),
		ApprovalExpiry:        cfg.Approvals.Expiry,
		DefaultToolsets:       cfg.Tools.DefaultToolsets,
		MemoryEnabled:         cfg.Memory.Enabled,
		MemoryTokenBudget:     cfg.Memory.TokenBudget,
		MemoryMaxDocs:         cfg.Memory.MaxDocs,
		Titles:                true,
		ContextTokens:         cfg.LLM.ContextTokens,
		CountTokens:           tokens.Count,
	}
}

func serverNames(cfg *config.Config) []string {
	names := make([]string, len(cfg.Tools.Servers))
	for i, s := range cfg.Tools.Servers {
		names[i] = s.Name
	}
	return names
}

// openApp builds everything that only checks its configuration first, so a
// mistake there opens nothing, then opens the store and builds the engine
// with sender, when not nil, subscribed to every conversation's events. The policy file (policy.file; without
// one, today's defaults with each platform's approvers) is the engine's one
// decision point for approvals.
func openApp(ctx context.Context, cfg *config.Config, log *slog.Logger, sender core.EventSender, opts ...appOption) (*app, error) {
	var o appOptions
	for _, opt := range opts {
		opt(&o)
	}
	model, err := newModel(cfg)
	if err != nil {
		return nil, err
	}
	host, err := newTools(cfg, log)
	if err != nil {
		return nil, err
	}
	popts := policyOptions(cfg)
	roots := tools.NewRoots(configuredRoots(cfg))
	roots.Learn(host.AskRoots(log))
	popts.Roots = roots.Of
	var inc *incidentthreads.Threads // known once the store is open; nil answers nothing
	popts.Place = func(key string) (string, string) { return inc.Place(key) }
	pol, err := policy.Load(cfg.Policy.File, popts)
	if err != nil {
		host.Close()
		return nil, err
	}
	holder := policy.NewHolder(pol)
	red, err := redactorFor(cfg, pol)
	if err != nil {
		host.Close()
		return nil, err
	}
	if o.storeOpening != nil {
		o.storeOpening()
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		host.Close()
		return nil, err
	}
	inc = newIncidents(cfg, store, log)
	ecfg := engineConfig(cfg)
	ecfg.Policy = holder
	ecfg.Limiter = policy.NewLimiter(holder.RunsPerPersonPerMinute)
	if pol.Redact().ModelInput {
		ecfg.RedactToolResult = red.String
	}
	ecfg.RedactInput = red.String
	var coord core.Coordinator
	closeCoord := func() {}
	if c, ok := store.(coordinated); ok && o.replica != "" {
		coord, closeCoord = c.Coordinator(o.replica, log.With("component", "coordinator"))
	}
	deps := core.Deps{
		Model:       model,
		Tools:       host,
		Store:       store,
		Sender:      sender,
		Logger:      log.With("component", "engine"),
		Coordinator: coord,
		// Everything shown to people, kept for streams or not, passes the
		// redactor first, where it leaves the engine: events, and the
		// approvals Decide and Status return.
		Display:         red.Events(),
		DisplayApproval: red.Approval,
		Previewer:       previewer(cfg, host),
	}
	mem := longTermMemory(cfg, store, red, log)
	if mem != nil {
		deps.Retriever, deps.Virtual = mem, mem.Tools()
	}
	deps.Commands = chatCommands(store, model, mem, log)
	engine, err := core.NewEngine(ecfg, deps)
	if err != nil {
		closeCoord()
		host.Close()
		store.Close()
		return nil, err
	}
	return &app{cfg: cfg, store: store, model: model, tools: host, engine: engine, policy: holder, red: red, coord: coord, closeCoord: closeCoord, memory: mem, incidents: inc}, nil
}

// longTermMemory is the memory over the store's documents (docs/design.md §14),
// or nil when memory.enabled is false. Writes are scanned with the same
// secret detectors that redact what people are shown.
func longTermMemory(cfg *config.Config, store core.Store, red *redact.Redactor, log *slog.Logger) *memory.Memory {
	ds, ok := store.(docs.Store)
	if !cfg.Memory.Enabled || !ok {
		return nil
	}
	return memory.New(ds, memory.Options{Secrets: red.String, Tokens: tokens.Count, Logger: log.With("component", "memory"),
		MaxDocBytes: cfg.Memory.MaxDocBytes, MinScore: minScore(cfg)})
}

// minScore is memory.min_score for memory.Options, where 0 means the
// default: a configured 0 turns the floor off.
func minScore(cfg *config.Config) float64 {
	if cfg.Memory.MinScore == 0 {
		return -1
	}
	return cfg.Memory.MinScore
}

// shutdown lets runs finish or checkpoint (until ctx ends), runs then (the
// adapters' flush of their last messages), and closes the tool servers and
// the store.
func (a *app) shutdown(ctx context.Context, then ...func() error) error {
	var errs []error
	if err := a.engine.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("engine: runs still active at shutdown: %w", err))
	}
	for _, f := range then {
		if err := f(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := a.tools.Close(); err != nil {
		errs = append(errs, err)
	}
	if a.closeCoord != nil {
		a.closeCoord()
	}
	if a.replicaLease != nil {
		a.replicaLease.Release()
	}
	if err := a.store.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// liveness reports whether this replica can show it is alive (docs/design.md
// §16): with PostgreSQL, whether its coordinator holds its liveness lock;
// a process without one is alive while it runs.
func (a *app) liveness() (bool, string) {
	if l, ok := a.coord.(alive); ok {
		return l.Alive()
	}
	return true, "a single process: alive while it runs"
}

// holdReplicaLease takes this process's liveness lease
// (schedule.HoldReplicaLease) unless its coordinator holds it already.
func (a *app) holdReplicaLease(ctx context.Context, name string, log *slog.Logger) {
	if a.coord == nil {
		a.replicaLease = schedule.HoldReplicaLease(ctx, a.store, name, log)
	}
}
