// Package cli holds what every opsgate subcommand shares: the exit codes,
// opsgate's help (Usage, and serve's, which has no package of its own)
// and the streams it writes to. The commands' bodies live beside what they
// operate on (memory/memorycli, internal/apitokens, internal/audit, ...);
// cmd/opsgate parses the flags, opens what a command needs and hands it
// over (docs/design.md §1).
package cli

import (
	"errors"
	"flag"
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

// Parse parses a command's flags; the command takes no argument. ok is
// false when the command must end with code: its help was asked for
// (printed on Stdout) or the flags are wrong (said on Stderr).
func (c IO) Parse(fs *flag.FlagSet, args []string, help string) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return c.parseFailed(fs, err, help), false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.Stderr, "opsgate %s: unexpected argument %q\n\n%s", fs.Name(), fs.Arg(0), help)
		return ExitUsage, false
	}
	return ExitOK, true
}

// ParseArgs is Parse for a command that takes up to max arguments, with
// flags before or after them; it returns the arguments.
func (c IO) ParseArgs(fs *flag.FlagSet, args []string, help string, max int) (rest []string, code int, ok bool) {
	fs.SetOutput(io.Discard)
	for {
		if err := fs.Parse(args); err != nil {
			return nil, c.parseFailed(fs, err, help), false
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(rest) > max {
		fmt.Fprintf(c.Stderr, "opsgate %s: unexpected argument %q\n\n%s", fs.Name(), rest[max], help)
		return nil, ExitUsage, false
	}
	return rest, ExitOK, true
}

func (c IO) parseFailed(fs *flag.FlagSet, err error, help string) int {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(c.Stdout, help)
		return ExitOK
	}
	fmt.Fprintf(c.Stderr, "opsgate %s: %v\n\n%s", fs.Name(), err, help)
	return ExitUsage
}

// ErrNoSubcommand is the usage error of a command given no subcommand:
// Usage prints only the help.
var ErrNoSubcommand = errors.New("no subcommand")

// Usage reports a usage error ("opsgate " + err, then the help) on Stderr
// and returns ExitUsage. err names the command: "token create: --scope: …".
func (c IO) Usage(err error, help string) int {
	if errors.Is(err, ErrNoSubcommand) {
		fmt.Fprint(c.Stderr, help)
	} else {
		fmt.Fprintf(c.Stderr, "opsgate %v\n\n%s", err, help)
	}
	return ExitUsage
}
