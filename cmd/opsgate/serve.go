package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/opsgate/opsgate/core"
)

const serveHelp = `Usage: opsgate serve

Run the configured chat adapters and schedules, with GET /healthz and
GET /metrics (Prometheus text format) on server.listen. SIGINT or SIGTERM
shut down gracefully: the HTTP server stops, runs finish or checkpoint
(up to 30 s), then the MCP servers and the store are closed.
`

// drainTimeout bounds how long serve waits for runs at shutdown.
const drainTimeout = 30 * time.Second

func (e *env) serve(ctx context.Context, args []string) int {
	if code, ok := e.parse(flag.NewFlagSet("serve", flag.ContinueOnError), args, serveHelp); !ok {
		return code
	}
	cfg, ok := e.setup(slog.LevelInfo)
	if !ok {
		return exitError
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()

	for _, a := range []struct {
		name string
		on   bool
	}{
		{"telegram", cfg.Telegram.Token != ""},
		{"slack", cfg.Slack.BotToken != ""},
		{"discord", cfg.Discord.Token != ""},
	} {
		if a.on {
			e.log.Warn("adapter configured but not available in this build yet; it will not start", "adapter", a.name)
		}
	}
	if len(cfg.Schedules) > 0 {
		e.log.Warn("schedules are configured but not available in this build yet; they will not run", "count", len(cfg.Schedules))
	}

	// No adapter renders events yet (runs can only be resumed by a late
	// approval decision); log them so nothing disappears silently.
	sender := core.SenderFunc(func(_ context.Context, ev core.Event) error {
		e.log.Debug("event", "type", ev.Type, "conv", ev.ConvKey, "run", ev.RunID)
		return nil
	})
	a, err := openApp(ctx, cfg, e.log, sender)
	if err != nil {
		e.fail(err)
		return exitError
	}
	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		e.fail(fmt.Errorf("serve: server.listen: %w", err))
		e.closeApp(a)
		return exitError
	}
	started := time.Now()
	srv := &http.Server{
		Handler:           e.routes(a, started),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(e.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	runCtx, cancelRun := context.WithCancel(context.Background())
	engineDone := make(chan struct{})
	go func() { a.engine.Run(runCtx); close(engineDone) }()
	e.log.Info("opsgate serving", "version", version, "addr", ln.Addr().String(),
		"model", cfg.LLM.Model, "toolsets", serverNames(cfg))

	code := exitOK
	select {
	case <-ctx.Done():
		e.log.Info("shutting down")
	case err := <-served:
		e.fail(fmt.Errorf("serve: http: %w", err))
		code = exitError
	}
	hctx, hcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer hcancel()
	if err := srv.Shutdown(hctx); err != nil {
		e.log.Warn("http shutdown", "err", err)
	}
	cancelRun()
	<-engineDone
	dctx, dcancel := context.WithTimeout(context.Background(), drainTimeout)
	defer dcancel()
	if err := a.shutdown(dctx); err != nil {
		e.log.Warn("shutdown", "err", err)
	}
	e.log.Info("stopped")
	return code
}

func (e *env) closeApp(a *app) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := a.shutdown(ctx); err != nil {
		e.log.Warn("shutdown", "err", err)
	}
}

func (e *env) routes(a *app, started time.Time) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := a.store.Ping(ctx); err != nil {
			e.log.Warn("health check failed", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "store: %v\n", err)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		if err := writeMetrics(w, a.engine.Metrics(), started, time.Now()); err != nil {
			e.log.Debug("write metrics", "err", err)
		}
	})
	return mux
}
