package memory_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/memory/docs"
)

// brokenSearch is a store whose full-text search fails, as a database
// that is down or locked does.
type brokenSearch struct{ docs.Store }

func (brokenSearch) SearchDocuments(context.Context, docs.Query) ([]docs.Match, error) {
	return nil, errors.New("injected: database is locked")
}

// Issue 12, acceptance 8: with the memory store failing, the run goes on
// without memory, the user is told nothing about it, and a warning is
// logged.
func TestMemoryUnavailableRunGoesOn(t *testing.T) {
	st := enginetest.New(t)
	// A document the conversation may see: with none, Retrieve searches
	// nothing (issue 25), and the broken search would not be reached.
	saveDoc(t, st.Store, docs.Document{Path: "payments/502.md", Title: "payments-api 502s",
		Content: "payments-api answers 502 after a deploy until its pods are ready."})
	var logs coretest.SyncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := memory.New(brokenSearch{st.Store}, memory.Options{Logger: log})
	rec := coretest.NewRecorder()
	d := st.Deps(t, rec)
	d.Retriever, d.Virtual, d.Commands, d.Logger = m, m.Tools(), m, log
	cfg := enginetest.Config()
	cfg.MemoryEnabled = true
	eng := enginetest.Engine(t, cfg, d)

	st.LLM.Push(llmfake.Reply{Text: "The payments pods look healthy."})
	if err := eng.Handle(t.Context(), core.Inbound{ConvKey: "test:unavailable", MessageID: "m1",
		User: core.Actor{ID: "alice", Name: "alice"}, Text: "payments-api 502s after the deploy"}); err != nil {
		t.Fatal(err)
	}
	done := rec.WaitCompleted(t, 1)
	if done.Status != core.RunDone || done.Text != "The payments pods look healthy." {
		t.Fatalf("completed = %+v, want the answer", done)
	}
	for _, ev := range rec.Events() {
		switch ev.Type {
		case core.EventWorkflowError, core.EventToolError, core.EventMemoryContextLoaded:
			t.Errorf("the user was shown %s: %+v", ev.Type, ev)
		}
		if strings.Contains(ev.Text+ev.Error, "memory") || strings.Contains(ev.Text+ev.Error, "locked") {
			t.Errorf("an event mentions the failure: %+v", ev)
		}
	}
	req := st.LLM.Requests()[0]
	for _, msg := range req.Messages {
		if strings.Contains(msg.Content, "<memory_context>") || strings.Contains(msg.Content, "untrusted_memory") {
			t.Errorf("the request carries memory although retrieval failed: %+v", msg)
		}
	}
	if got := logs.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "memory retrieval failed") || !strings.Contains(got, "injected: database is locked") {
		t.Errorf("no warning logged:\n%s", got)
	}
}
