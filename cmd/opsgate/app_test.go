package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/internal/config"
)

// TestModelTimeoutsFromConfig: llm.timeout and llm.stream_idle_timeout
// (here from their environment overrides) reach the model client.
func TestModelTimeoutsFromConfig(t *testing.T) {
	fake := llmfake.New(t)
	dir := t.TempDir()
	cfg, err := config.Load(writeConfig(t, dir, fake.URL, "", ""),
		testEnv("OPSGATE_LLM_TIMEOUT", "200ms", "OPSGATE_LLM_STREAM_IDLE_TIMEOUT", "300ms"))
	if err != nil {
		t.Fatal(err)
	}
	model, err := newModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := core.ModelRequest{Messages: []core.Message{{Role: core.RoleUser, Content: "hi"}}}
	for _, tt := range []struct {
		reply llmfake.Reply
		want  string
	}{
		{llmfake.Reply{Text: "never", NeverAnswer: true}, "sent no answer within 200ms (llm.timeout)"},
		{llmfake.Reply{Text: "Scaling web to five replicas", StallAfterTokens: 3}, "went silent for 300ms (llm.stream_idle_timeout) after 3 tokens"},
	} {
		fake.Push(tt.reply)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := model.Generate(ctx, req, nil)
		cancel()
		var me *core.ModelError
		if !errors.As(err, &me) || !strings.Contains(me.Message, tt.want) {
			t.Errorf("err = %v, want a model error saying %q", err, tt.want)
		}
	}
}
