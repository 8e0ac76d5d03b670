package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Spec computes fire times. They depend on the spec alone, never on when a
// process started, so every replica computes the same ones.
type Spec interface {
	// Next returns the first fire time strictly after t.
	Next(t time.Time) time.Time
}

// parser accepts 5 or 6 fields (seconds optional), descriptors (@daily,
// @every 1h) and a CRON_TZ= or TZ= prefix.
var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Parse reads a cron spec. "@every D" fires at the multiples of D since the
// Unix epoch (robfig/cron would count from each process's start).
func Parse(spec string) (s Spec, err error) {
	spec = strings.TrimSpace(spec)
	if d, ok := strings.CutPrefix(spec, "@every "); ok {
		dur, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil {
			return nil, fmt.Errorf("cron %q: %v", spec, err)
		}
		if dur < time.Second || dur%time.Second != 0 {
			return nil, fmt.Errorf("cron %q: the interval must be a whole number of seconds, at least 1s", spec)
		}
		return every(dur), nil
	}
	// robfig/cron panics on a TZ prefix with nothing after it
	// (LIBRARIES.md §6).
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("cron %q: not a valid spec", spec)
		}
	}()
	cs, err := parser.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("cron %q: %v", spec, err)
	}
	return cs, nil
}

// every fires at the multiples of a duration since the Unix epoch.
type every time.Duration

func (e every) Next(t time.Time) time.Time {
	d := time.Duration(e)
	return t.Truncate(d).Add(d).In(t.Location())
}

// NextN returns the next n fire times after t.
func NextN(s Spec, t time.Time, n int) []time.Time {
	out := make([]time.Time, 0, n)
	for range n {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out
}
