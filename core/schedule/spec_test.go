package schedule

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	base := time.Date(2026, 11, 24, 8, 59, 30, 0, time.UTC) // a Tuesday
	tests := []struct {
		spec string
		want []time.Time
	}{
		{"0 9 * * 1-5", []time.Time{time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC), time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)}},
		{"*/20 * * * * *", []time.Time{time.Date(2026, 11, 24, 8, 59, 40, 0, time.UTC), time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}},
		{"@daily", []time.Time{time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)}},
		// Multiples of the interval since the epoch, whatever the start.
		{"@every 2s", []time.Time{time.Date(2026, 11, 24, 8, 59, 32, 0, time.UTC), time.Date(2026, 11, 24, 8, 59, 34, 0, time.UTC)}},
		{"@every 1h", []time.Time{time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC), time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}},
		// 09:00 in Oslo is 08:00 UTC in winter.
		{"CRON_TZ=Europe/Oslo 0 9 * * *", []time.Time{time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC), time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}},
	}
	for _, tt := range tests {
		s, err := Parse(tt.spec)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.spec, err)
			continue
		}
		got := NextN(s, base, 2)
		for i := range tt.want {
			if !got[i].Equal(tt.want[i]) {
				t.Errorf("%q: fire %d = %s, want %s", tt.spec, i, got[i].UTC(), tt.want[i])
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"CRON_TZ=UTC":                    "not a valid spec", // robfig/cron panics on this one
		"* * *":                          "expected 5 to 6 fields",
		"@every 1.5s":                    "whole number of seconds",
		"@every soon":                    "invalid duration",
		"61 * * * *":                     "above maximum",
		"CRON_TZ=Mars/Olympus 0 9 * * *": "provided bad location",
	} {
		_, err := Parse(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", spec, err, want)
		}
	}
}
