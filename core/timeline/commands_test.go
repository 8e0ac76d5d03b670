package timeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/timeline"
	"github.com/opsgate/opsgate/internal/tokens"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/memory/docs"
)

// saver keeps drafts in real memory, as cmd/opsgate does.
type saver struct{ m *memory.Memory }

func (s saver) SavePostmortem(ctx context.Context, convKey string, by core.Actor, t timeline.Timeline, d timeline.Draft) (string, string, error) {
	doc, err := s.m.SavePostmortem(ctx, memory.Postmortem{ConvKey: convKey, Author: by.ID, Title: d.Title, Content: d.Content, Tags: t.Tags()})
	return doc.Path, doc.ID, err
}

// /postmortem answers later: Handle returns while the model is still
// drafting (an adapter's handler has a deadline of seconds), and the
// draft comes as the command's answer once the model is done.
func TestPostmortemDoesNotHoldTheHandler(t *testing.T) {
	stack := enginetest.New(t)
	rec := coretest.NewRecorder()
	d := stack.Deps(t, rec)
	mem := memory.New(stack.Store, memory.Options{Tokens: tokens.Count})
	d.Commands = &timeline.Commands{Source: stack.Store, Model: d.Model, Saver: saver{mem}}
	eng := enginetest.Engine(t, enginetest.Config(), d)
	const key = "telegram:bot:42"
	alice := core.Actor{ID: "telegram:42", Name: "alice"}

	stack.LLM.Push(llmfake.Reply{Text: "All pods are Running."})
	if err := eng.Handle(t.Context(), core.Inbound{ConvKey: key, MessageID: "1", User: alice, Text: "are the pods ok?"}); err != nil {
		t.Fatal(err)
	}
	rec.WaitCompleted(t, 1)

	release := make(chan struct{})
	stack.LLM.SetResponder(func(llmfake.Request) llmfake.Reply {
		<-release
		return llmfake.Reply{Text: "## Summary\nThe pods were fine."}
	})
	handled := make(chan error, 1)
	go func() {
		handled <- eng.Handle(t.Context(), core.Inbound{ConvKey: key, MessageID: "2", User: alice, Text: "/postmortem"})
	}()
	select {
	case err := <-handled:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("Handle waited for the model")
	}
	close(release)
	done := rec.WaitCompleted(t, 2)
	if !strings.Contains(done.Text, "## Summary\nThe pods were fine.") || !strings.Contains(done.Text, "Saved as a postmortem draft: `postmortems/") {
		t.Fatalf("the answer = %q", done.Text)
	}
	list, err := stack.Store.Documents(t.Context(), docs.Filter{Type: docs.Postmortem})
	if err != nil || len(list) != 1 || list[0].Trust != docs.AgentDraft || list[0].Scope != (docs.Scope{Kind: docs.Channel, Key: memory.ChannelOf(key)}) {
		t.Fatalf("postmortems kept: %+v, %v; want one agent draft in the chat's channel", list, err)
	}
	if err := eng.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
}
