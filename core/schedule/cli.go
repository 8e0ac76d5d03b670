package schedule

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Help is opsgate schedules' help.
const Help = `Usage: opsgate schedules [run NAME]

Without arguments, list the configured schedules with their next fires.

  run NAME  fire the schedule now, in this process, against the configured
            store and target, print the answer on stdout (like chat -m),
            and exit 0 when its run completed (1 when it failed or could
            not start)
`

// WriteNext writes a configured schedule and its next three fires after
// now, as opsgate schedules lists them; a cron that does not parse is the
// error.
func WriteNext(w io.Writer, name, cron, target string, now time.Time) error {
	spec, err := Parse(cron)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s  %q → %s\n", name, cron, target)
	for _, t := range NextN(spec, now, 3) {
		fmt.Fprintf(w, "  next %s (in %s)\n", t.Format(time.RFC3339), t.Sub(now).Round(time.Second))
	}
	return nil
}

// Answers is the events' sender of opsgate schedules run: it prints each
// answer on Out, whatever the target (as chat -m prints it: the log
// target logs it at info, which the default level hides), and keeps the
// run's error.
type Answers struct {
	Out    io.Writer
	failed atomic.Value // string: the run's error
}

var _ core.EventSender = (*Answers)(nil)

// Send prints ev when it is an answer and keeps it when it is the run's
// error. A step that only called tools has no text to print.
func (a *Answers) Send(_ context.Context, ev core.Event) error {
	if ev.Type == core.EventWorkflowError {
		a.failed.Store(ev.Text)
	}
	if ev.Type == core.EventGenerationComplete && strings.TrimSpace(ev.Text) != "" {
		fmt.Fprintln(a.Out, ev.Text)
	}
	return nil
}

// Failed is the run's error, or "".
func (a *Answers) Failed() string {
	msg, _ := a.failed.Load().(string)
	return msg
}
