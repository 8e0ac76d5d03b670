// Command opsgate is a ChatOps agent for on-call engineers: it plans with an
// LLM, runs MCP tools, and never runs a mutating tool without a person's
// approval. See Main for the commands; main only binds it to the process.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	// SIGTERM ends every command gracefully. SIGINT is left to the commands:
	// for chat on a terminal, Ctrl-C stops a run rather than the program.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	code := mainEnv(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv, os.Environ)
	stop()
	os.Exit(code)
}
