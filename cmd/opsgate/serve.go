package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/schedule"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/opsgate/opsgate/internal/cli"
	"github.com/opsgate/opsgate/internal/metrics"
	"github.com/opsgate/opsgate/policy"
)

// drainTimeout bounds how long serve waits for runs at shutdown.
const drainTimeout = 30 * time.Second

func (e *env) serve(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	allowEmpty := fs.Bool("allow-empty", false, "start with nothing to serve")
	if code, ok := e.parse(fs, args, cli.ServeHelp); !ok {
		return code
	}
	cfg, ok := e.setup(slog.LevelInfo)
	if !ok {
		return exitError
	}
	e.warnUnknownEnv()
	if _, _, empty := nothingToServe(cfg, 0); empty {
		// Only the HTTP API may be left to serve: it counts with a token.
		tokens, err := apiTokensAtStart(ctx, cfg)
		if err != nil {
			return e.fail(err) // the store's error, as openApp's would be
		}
		if what, fix, empty := nothingToServe(cfg, tokens); empty {
			if !*allowEmpty {
				return e.fail(fmt.Errorf("serve: %s; %s", what, fix))
			}
			e.log.Warn("serving nothing (--allow-empty): only /healthz, /readyz and /metrics answer", "why", what)
		}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()

	// Adapters check their configuration before anything is opened, so a
	// mistake starts nothing.
	started := time.Now()
	m := metrics.New(version, started)
	chats, err := buildChats(cfg, e.log, m)
	if err != nil {
		return e.fail(err)
	}
	scheds, err := buildSchedules(cfg, chats)
	if err != nil {
		return e.fail(err)
	}
	// The chats ask their platforms what they need (the bot's name, its
	// commands) while the store opens, once nothing the configuration
	// decides can stop the start any more.
	a, err := openApp(ctx, cfg, e.log, nil, asReplica(schedule.ReplicaName()), whileStoreOpens(func() { chats.Prepare(ctx) }))
	if err != nil {
		return e.fail(err)
	}
	// Without a coordinator (SQLite) this process's fires are known alive
	// by its own lease.
	a.holdReplicaLease(ctx, schedule.ReplicaName(), e.log)
	if a.incidents != nil {
		if err := a.incidents.Attach(chats, a.engine, a.store); err != nil {
			e.fail(err)
			e.closeApp(a)
			return exitError
		}
	}
	a.engine.Subscribe("", m.Subscriber(), core.SubscribeOptions{})
	serveChats(chats, a)
	policy.ReloadOnHUP(ctx, a.policy, cfg.Policy.File, e.log)
	closeChats := chats.Close
	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		e.fail(fmt.Errorf("serve: server.listen: %w", err))
		e.closeApp(a, closeChats)
		return exitError
	}
	handler, closeStreams := e.routes(a, chats, m)
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(e.log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(closeStreams)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	// Messages stored before a crash but never handled run first.
	if n, err := a.engine.Recover(ctx, chats.Owns); err != nil {
		e.log.Error("recovering messages stored before a restart", "err", err)
	} else if n > 0 {
		e.log.Info("recovered messages stored before a restart", "count", n)
	}
	runCtx, cancelRun := context.WithCancel(context.Background())
	engineDone := make(chan struct{})
	go func() { a.engine.Run(runCtx); close(engineDone) }()
	chatErr := make(chan error, len(chats.Chats()))
	var running sync.WaitGroup
	running.Add(1)
	go func() {
		defer running.Done()
		chats.Run(runCtx, a.chatEngine(), chatErr)
	}()
	var fires *schedule.Runner
	if len(scheds) > 0 {
		// Both stores keep the ledger (core.FireLedger).
		ledger, _ := a.store.(core.FireLedger)
		r := &schedule.Runner{
			Schedules: scheds, Ledger: ledger, Replica: schedule.ReplicaName(), Log: e.log.With("component", "schedule"),
			Alive:  a.liveness,
			Target: scheduleTarget(cfg, a, chats, e.log),
		}
		fires = r
		running.Add(1)
		go func() {
			defer running.Done()
			r.Run(runCtx)
		}()
	}
	e.log.Info("opsgate serving", "version", version, "addr", ln.Addr().String(),
		"model", cfg.LLM.Model, "toolsets", serverNames(cfg), "adapters", chats.Names(),
		"schedules", startedSchedules(cfg))

	code := exitOK
	select {
	case <-ctx.Done():
		e.log.Info("shutting down")
	case err := <-served:
		e.fail(fmt.Errorf("serve: http: %w", err))
		code = exitError
	case err := <-chatErr:
		// An adapter that cannot work (a revoked token) stops the server:
		// half a deployment would look healthy while ignoring its users.
		e.fail(err)
		code = exitError
	}
	hctx, hcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer hcancel()
	if err := srv.Shutdown(hctx); err != nil {
		e.log.Warn("http shutdown", "err", err)
	}
	// Stop intake first (polling confirms only what was stored), then let
	// runs finish or checkpoint, then flush the adapters' last messages.
	cancelRun()
	running.Wait()
	<-engineDone
	dctx, dcancel := context.WithTimeout(context.Background(), drainTimeout)
	defer dcancel()
	if fires != nil {
		// The fires' runs end (or are cut short) with the engine's; then
		// each fire is recorded done or interrupted, never left running.
		drained := a.engine.Shutdown(dctx)
		if drained != nil {
			e.log.Warn("shutdown: runs still active", "err", drained)
		}
		fires.Stop(dctx, drained == nil)
	}
	if err := a.shutdown(dctx, closeChats); err != nil {
		e.log.Warn("shutdown", "err", err)
	}
	e.log.Info("stopped")
	return code
}

func (e *env) closeApp(a *app, then ...func() error) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := a.shutdown(ctx, then...); err != nil {
		e.log.Warn("shutdown", "err", err)
	}
}
