// Package policycli is the body of opsgate policy: check validates a
// policy file, explain prints what it decides for one call or who may see
// a conversation. It works offline, on the file alone; cmd/opsgate loads
// the configuration and says which approvers it names outside the file
// (docs/design.md §1).
package policycli

import (
	"flag"
	"fmt"
	"strings"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/cli"
	"github.com/opsgate/opsgate/policy"
)

// Help is opsgate policy's help.
const Help = `Usage:
  opsgate policy check [FILE]
  opsgate policy explain --as IDENTITY --server NAME --tool NAME [--args JSON]
                         [--risk read|write|destructive] [--policy FILE]
  opsgate policy explain --can-see KEY [--policy FILE]

check validates a policy file (default: policy.file of the configuration):
it prints "ok: N people, N roles, N rules", or the first problem as
FILE:LINE: key: what is wrong, and exits 1.

explain prints what the policy decides for one call, like kubectl auth
can-i: the rule that matches, the action, who may approve and how many
must. IDENTITY is platform:id (slack:U0BOB, telegram:12345678,
terminal:alice). explain works offline: it does not ask the MCP servers
for the tool's risk, so give --risk as the tool's annotations would
(default: write, as for a tool without annotations).

explain --can-see KEY lists who may see conversation KEY (through the API
and its console) and why: the admins, the policy's visibility rules, a
terminal conversation's own person. Anyone who took part in it (sent a
message, voted, was eligible to decide one of its approvals, started it
through the API) sees it too, except a terminal conversation.
`

// Check validates file and prints its counts and warnings; "" is no policy
// file, which is valid. Warnings leave the exit code alone: the file is
// valid as written.
func Check(c cli.IO, file string, opts policy.Options) int {
	if file == "" {
		fmt.Fprintln(c.Stdout, "ok: no policy file (policy.file is not set): the requester or the platform's approvers decide")
		return cli.ExitOK
	}
	p, err := policy.Load(file, opts)
	if err != nil {
		fmt.Fprintln(c.Stderr, err)
		return cli.ExitError
	}
	people, roles, rules := p.Counts()
	fmt.Fprintf(c.Stdout, "ok: %d people, %d roles, %d rules\n", people, roles, rules)
	for _, w := range p.Warnings() {
		fmt.Fprintln(c.Stdout, w)
	}
	return cli.ExitOK
}

// ExplainFlags are policy explain's flags.
type ExplainFlags struct {
	As, Server, Tool, Args, Risk, Policy, CanSee string
}

// Register defines the flags on fs.
func (f *ExplainFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.As, "as", "", "who asks: platform:id")
	fs.StringVar(&f.Server, "server", "", "the MCP server (toolset)")
	fs.StringVar(&f.Tool, "tool", "", "the tool's name on its server")
	fs.StringVar(&f.Args, "args", "{}", "the call's arguments as JSON")
	fs.StringVar(&f.Risk, "risk", string(core.RiskWrite), "read, write or destructive")
	fs.StringVar(&f.Policy, "policy", "", "policy file (default: policy.file)")
	fs.StringVar(&f.CanSee, "can-see", "", "list who may see this conversation key instead")
}

// Call is the call the flags describe, or why they describe none (a usage
// error).
func (f ExplainFlags) Call() (core.PolicyCall, error) {
	platform, id, _ := strings.Cut(f.As, ":")
	switch {
	case platform == "" || id == "":
		return core.PolicyCall{}, fmt.Errorf("--as: want an identity platform:id, such as slack:U0BOB (got %q)", f.As)
	case f.Server == "" || f.Tool == "":
		return core.PolicyCall{}, fmt.Errorf("--server and --tool are required")
	}
	switch core.Risk(f.Risk) {
	case core.RiskRead, core.RiskWrite, core.RiskDestructive:
	default:
		return core.PolicyCall{}, fmt.Errorf("--risk: want read, write or destructive (got %q)", f.Risk)
	}
	canon, err := core.CanonicalJSON([]byte(f.Args))
	if err != nil {
		return core.PolicyCall{}, fmt.Errorf("--args: %v", err)
	}
	return core.PolicyCall{Server: f.Server, Tool: f.Tool, Arguments: canon, Risk: core.Risk(f.Risk),
		Requester: core.Actor{ID: f.As}, ConvKey: platform + ":explain"}, nil
}

// Explain prints what the policy in file decides for call.
func Explain(c cli.IO, file string, opts policy.Options, call core.PolicyCall) int {
	p, err := policy.Load(file, opts)
	if err != nil {
		fmt.Fprintln(c.Stderr, err)
		return cli.ExitError
	}
	p.Explain(c.Stdout, call)
	return cli.ExitOK
}

// CanSee prints who may see conversation key by the policy in file.
func CanSee(c cli.IO, file string, opts policy.Options, key string) int {
	p, err := policy.Load(file, opts)
	if err != nil {
		fmt.Fprintln(c.Stderr, err)
		return cli.ExitError
	}
	p.ExplainCanSee(c.Stdout, key)
	return cli.ExitOK
}
