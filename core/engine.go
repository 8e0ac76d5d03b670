package core

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Engine runs conversations: one active run per conversation, queued and
// steering messages, stop, and the approval gate. It is safe for concurrent
// use. Several engines (processes) may share one Store; a paused run is
// resumed by whichever engine receives the deciding click.
type Engine struct {
	cfg    Config
	model  Model
	tools  ToolHost
	store  Store
	sender EventSender
	memory Retriever
	log    *slog.Logger
	now    func() time.Time

	mu       sync.Mutex
	sessions map[string]*session
	runs     sync.WaitGroup // active runs and event outboxes
	closed   bool

	// SendErrors counts events whose delivery failed.
	sendErrors countingInt
}

// NewEngine checks the configuration and returns an engine; it starts nothing.
func NewEngine(cfg Config, d Deps) (*Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if d.Model == nil || d.Tools == nil || d.Store == nil || d.Sender == nil {
		return nil, errors.New("core: engine needs a model, a tool host, a store and a sender")
	}
	if d.Retriever == nil {
		d.Retriever = NoMemory{}
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Engine{
		cfg: cfg, model: d.Model, tools: d.Tools, store: d.Store, sender: d.Sender,
		memory: d.Retriever, log: d.Logger, now: d.Now,
		sessions: map[string]*session{},
	}, nil
}

// Run sweeps expired approvals until ctx ends. Runs themselves are started by
// Handle and Decide and do not need Run; without it, expiry is still
// enforced when a late decision arrives.
func (e *Engine) Run(ctx context.Context) error {
	t := time.NewTicker(e.cfg.ExpirySweep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			e.ExpireApprovals(ctx)
		}
	}
}
