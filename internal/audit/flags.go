package audit

import (
	"flag"
	"fmt"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Flags are opsgate audit's flags.
type Flags struct {
	Since        time.Duration
	Conversation string
	JSON         bool
}

// Register defines the flags on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.DurationVar(&f.Since, "since", 0, "only entries of the last DURATION")
	fs.StringVar(&f.Conversation, "conversation", "", "only this conversation")
	fs.BoolVar(&f.JSON, "json", false, "one JSON object per line")
}

// Check says what is wrong with the flags' values, naming the command.
func (f Flags) Check() error {
	if f.Since < 0 {
		return fmt.Errorf("audit: --since: want a positive duration such as 24h (got %s)", f.Since)
	}
	return nil
}

// Filter is what the flags select of the log, as of now.
func (f Flags) Filter(now time.Time) core.AuditFilter {
	af := core.AuditFilter{ConvKey: f.Conversation}
	if f.Since > 0 {
		af.Since = now.Add(-f.Since)
	}
	return af
}
