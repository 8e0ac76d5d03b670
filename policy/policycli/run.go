package policycli

import (
	"cmp"
	"fmt"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/cli"
	"github.com/opsgate/opsgate/policy"
)

// Run is opsgate policy: it runs check or explain with the rest of args,
// prints Help for help, and reports anything else as a usage error.
func Run(c cli.IO, args []string, check, explain func(args []string) int) int {
	if len(args) == 0 {
		return c.Usage(cli.ErrNoSubcommand, Help)
	}
	switch args[0] {
	case "check":
		return check(args[1:])
	case "explain":
		return explain(args[1:])
	case "help", "-h", "--help":
		fmt.Fprint(c.Stdout, Help)
		return cli.ExitOK
	}
	return c.Usage(fmt.Errorf("policy: unknown command %q", args[0]), Help)
}

// Check is the call the flags describe (none with --can-see); the error is
// a usage error (cli.IO.Usage).
func (f ExplainFlags) Check() (core.PolicyCall, error) {
	if f.CanSee != "" {
		return core.PolicyCall{}, nil
	}
	call, err := f.Call()
	if err != nil {
		return call, fmt.Errorf("policy explain: %w", err)
	}
	return call, nil
}

// Run prints what the policy decides for call, or with --can-see who may
// see the key. file is policy.file, which --policy overrides.
func (f ExplainFlags) Run(c cli.IO, file string, opts policy.Options, call core.PolicyCall) int {
	file = cmp.Or(f.Policy, file)
	if f.CanSee != "" {
		return CanSee(c, file, opts, f.CanSee)
	}
	return Explain(c, file, opts, call)
}
