package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/llm"
)

// newClient returns a client of fake, with cfg's BaseURL and Model filled in.
func newClient(t *testing.T, fake *llmfake.Server, cfg llm.Config) *llm.Client {
	t.Helper()
	if cfg.BaseURL == "" {
		cfg.BaseURL = fake.URL
	}
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func userRequest(text string) core.ModelRequest {
	return core.ModelRequest{Messages: []core.Message{
		{Role: core.RoleSystem, Content: "You are opsgate."},
		{Role: core.RoleUser, Content: text},
	}}
}

// recorder collects deltas.
type recorder struct{ deltas []core.Delta }

func (r *recorder) add(d core.Delta) { r.deltas = append(r.deltas, d) }

func (r *recorder) text() (text, thinking string) {
	var t, th strings.Builder
	for _, d := range r.deltas {
		t.WriteString(d.Text)
		th.WriteString(d.Thinking)
	}
	return t.String(), th.String()
}

// modelError asserts that err is a *core.ModelError of kind.
func modelError(t *testing.T, err error, kind core.ModelErrorKind) *core.ModelError {
	t.Helper()
	var me *core.ModelError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v (%T), want *core.ModelError", err, err)
	}
	t.Logf("error: %v", me)
	if me.Kind != kind {
		t.Fatalf("kind = %s, want %s (error: %v)", me.Kind, kind, me)
	}
	return me
}

func generate(t *testing.T, c *llm.Client, req core.ModelRequest) (core.ModelResponse, *recorder, error) {
	t.Helper()
	var rec recorder
	resp, err := c.Generate(context.Background(), req, rec.add)
	return resp, &rec, err
}
