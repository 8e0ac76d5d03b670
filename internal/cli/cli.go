// Package cli holds what every opsgate subcommand shares: the exit codes
// and the streams it writes to. The commands' bodies live beside what they
// operate on (memory/memorycli, internal/apitokens, internal/audit, ...);
// cmd/opsgate parses the flags, opens what a command needs and hands it
// over (docs/design.md §1).
package cli

import (
	"fmt"
	"io"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1 // a bad configuration, a failed check, a failed run
	ExitUsage = 2 // unknown command or flag
	// ExitInterrupted is the shell's code for a program ended by SIGINT.
	ExitInterrupted = 130
)

// IO is where a command writes: its result on Stdout, why it failed and
// notes for the person on Stderr.
type IO struct {
	Stdout, Stderr io.Writer
}

// Fail prints err for the person at the terminal and returns ExitError.
func (c IO) Fail(err error) int {
	fmt.Fprintf(c.Stderr, "opsgate: %v\n", err)
	return ExitError
}
