package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

const healthcheckHelp = `Usage: opsgate healthcheck

GET /healthz of the opsgate serve on server.listen (0.0.0.0 is asked on
127.0.0.1) and exit 0 when it answers 200, else 1. For container health
checks in images without a shell or curl (the distroless image).
`

func (e *env) healthcheck(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	if code, ok := e.parse(fs, args, healthcheckHelp); !ok {
		return code
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	host, port, err := net.SplitHostPort(cfg.Server.Listen)
	if err != nil {
		e.fail(fmt.Errorf("healthcheck: server.listen: %w", err))
		return exitError
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	url := "http://" + net.JoinHostPort(host, port) + "/healthz"
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.fail(fmt.Errorf("healthcheck: %w", err))
		return exitError
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		e.fail(fmt.Errorf("healthcheck: %s: %s %s", url, resp.Status, strings.TrimSpace(string(body))))
		return exitError
	}
	fmt.Fprintln(e.stdout, "ok")
	return exitOK
}
