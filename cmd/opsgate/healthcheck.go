package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/opsgate/opsgate/internal/readiness"
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
	if err := readiness.Check(ctx, cfg.Server.Listen); err != nil {
		return e.fail(err)
	}
	fmt.Fprintln(e.stdout, "ok")
	return exitOK
}
