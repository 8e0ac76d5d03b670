package timeline

import (
	"flag"
	"fmt"

	"github.com/opsgate/opsgate/internal/cli"
)

// Flags are opsgate incident's flags.
type Flags struct {
	Format string
}

// Register defines the flags on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Format, "format", "md", "report: md or json")
}

// Check checks the command's arguments (report KEY or postmortem KEY) and
// the flags; the error is a usage error (cli.IO.Usage).
func (f Flags) Check(args []string) error {
	if len(args) != 2 || (args[0] != "report" && args[0] != "postmortem") {
		return cli.ErrNoSubcommand
	}
	if f.Format != "md" && f.Format != "json" {
		return fmt.Errorf("incident: --format: want md or json (got %q)", f.Format)
	}
	return nil
}
