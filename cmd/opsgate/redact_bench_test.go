package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/policy/redact"
)

// reply200 is the events of a 200-token answer as the engine emits them.
func reply200() []core.Event {
	evs := []core.Event{{Type: core.EventGenerationStart, RunID: "r1"}}
	var full strings.Builder
	for i := range 200 {
		tok := fmt.Sprintf(" word%d", i)
		if i%25 == 24 {
			tok = "\nThe pod payments-api-7d9 restarted 3 times."
		}
		full.WriteString(tok)
		evs = append(evs, core.Event{Type: core.EventToken, RunID: "r1", Text: tok})
	}
	return append(evs, core.Event{Type: core.EventGenerationComplete, RunID: "r1", Text: full.String()},
		core.Event{Type: core.EventCompleted, RunID: "r1", Text: full.String(), Status: core.RunDone})
}

// BenchmarkRedactingSender200TokenReply is what the choke point adds to a
// 200-token reply on its way to an adapter (issue 10: within 5% of make
// bench figure 2); "plain" is the same events passed through untouched.
func BenchmarkRedactingSender200TokenReply(b *testing.B) {
	evs := reply200()
	sink := core.SenderFunc(func(context.Context, core.Event) error { return nil })
	red, err := redact.New(redact.Options{Secrets: []string{"sk-live-0123456789abcdef", "xoxb-1111-2222-abcdefabcdef"}})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		send core.EventSender
	}{{"plain", sink}, {"redacted", nil}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				s := tc.send
				if s == nil {
					display := red.Events()
					var shown []core.Event
					s = core.SenderFunc(func(ctx context.Context, ev core.Event) error {
						shown = display(shown[:0], ev)
						for _, ev := range shown {
							_ = sink.Send(ctx, ev)
						}
						return nil
					})
				}
				for _, ev := range evs {
					_ = s.Send(ctx, ev)
				}
			}
		})
	}
}
