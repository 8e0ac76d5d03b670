package redact

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// streamSecret is a GitHub token: the redactor holds it back while it
// arrives, so it is still held when the model's answer ends with it.
var streamSecret = "ghp_" + strings.Repeat("Ab3dE", 7) + "x"

// words returns an answer of n words; with secret, the secret is its last
// word (what the redactor holds back at the end) and, from 7 words, one in
// the middle too.
func words(n int, secret bool) string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("w%d", i+1)
	}
	if secret {
		w[n-1] = streamSecret
		if n >= 7 {
			w[n/2] = streamSecret + "."
		}
	}
	return strings.Join(w, " ")
}

// Issue 20, acceptance 6 (engine level): for answers of 1, 7 and 40 words
// streamed in chunks of 1–3 characters, with and without a secret, the
// token events of a generation, concatenated, are exactly its
// generation.complete text (the redacted form when it holds a secret), and
// no token event is empty. The redactor is the engine's display filter, as
// cmd/opsgate sets it; the subscriber is what every adapter and stream gets.
func TestTokenEventsAddUpToTheGenerationText(t *testing.T) {
	r := mustNew(t, Options{})
	for _, n := range []int{1, 7, 40} {
		for _, secret := range []bool{false, true} {
			for _, chunk := range []int{2, 3} {
				t.Run(fmt.Sprintf("%d words secret=%v chunks 1-%d", n, secret, chunk), func(t *testing.T) {
					answer := words(n, secret)
					stack := enginetest.New(t)
					rec := coretest.NewRecorder()
					d := stack.Deps(t, rec)
					d.Display = r.Events()
					eng := enginetest.Engine(t, enginetest.Config(), d)
					t.Cleanup(func() {
						ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
						defer cancel()
						eng.Shutdown(ctx)
					})
					stack.LLM.Push(llmfake.Reply{Text: answer, SplitChars: chunk})
					if err := eng.Handle(t.Context(), core.Inbound{ConvKey: "terminal:alice", MessageID: "m1", User: core.Actor{ID: "alice"}, Text: "status?"}); err != nil {
						t.Fatal(err)
					}
					done := rec.WaitCompleted(t, 1)
					checkGenerations(t, rec.RunEvents(done.RunID), r.String(answer), secret)
				})
			}
		}
	}
}

// checkGenerations checks every generation of evs: its tokens add up to
// its generation.complete text, none is empty, and the one generation
// there is shows want.
func checkGenerations(t *testing.T, evs []core.Event, want string, secret bool) {
	t.Helper()
	var (
		in     bool
		tokens []string
		gens   int
	)
	for _, ev := range evs {
		switch ev.Type {
		case core.EventGenerationStart:
			in, tokens = true, nil
		case core.EventToken:
			if ev.Text == "" {
				t.Errorf("token event %d has no text", ev.Seq)
			}
			if !in {
				t.Errorf("token event %d outside a generation", ev.Seq)
			}
			tokens = append(tokens, ev.Text)
		case core.EventGenerationComplete:
			gens++
			if got := strings.Join(tokens, ""); got != ev.Text {
				t.Errorf("tokens add up to\n%q\ngeneration.complete says\n%q\ntokens: %q", got, ev.Text, tokens)
			}
			if ev.Text != want {
				t.Errorf("generation.complete = %q, want %q", ev.Text, want)
			}
			in = false
		}
	}
	if gens != 1 {
		t.Fatalf("%d generations, want 1:\n%s", gens, coretest.Dump(evs))
	}
	if secret && (!strings.Contains(want, "[REDACTED:") || strings.Contains(want, streamSecret[:10])) {
		t.Fatalf("the redacted answer %q does not redact the secret; the test proves nothing", want)
	}
}
