package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/core"
)

func (e *env) approvals(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("approvals", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "show: print the request as JSON")
	rest, code, ok := e.parseArgs(fs, args, terminal.ApprovalsHelp, 2)
	if !ok {
		return code
	}
	id, err := terminal.ApprovalID(rest)
	if err != nil {
		return e.io().Usage(err, terminal.ApprovalsHelp)
	}
	cfg, red, store, ok := e.openRedacted(ctx)
	if !ok {
		return exitError
	}
	defer store.Close()
	a, err := store.Approval(ctx, id)
	if errors.Is(err, core.ErrNotFound) {
		fmt.Fprintf(e.stderr, "opsgate approvals show: no approval %q in %s\n", id, cfg.Store.URL)
		return exitError
	}
	if err != nil {
		return e.fail(err)
	}
	if err := terminal.ShowApproval(e.stdout, red.Approval(a), *asJSON); err != nil {
		return e.fail(err)
	}
	return exitOK
}
