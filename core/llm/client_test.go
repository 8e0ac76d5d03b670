package llm_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/llm"
)

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name  string
		cfg   llm.Config
		field string
	}{
		{"no base url", llm.Config{Model: "m"}, "BaseURL"},
		{"base url without scheme", llm.Config{BaseURL: "127.0.0.1:11434/v1", Model: "m"}, "BaseURL"},
		{"base url with other scheme", llm.Config{BaseURL: "ftp://example.com/v1", Model: "m"}, "BaseURL"},
		{"no model", llm.Config{BaseURL: "http://127.0.0.1:11434/v1"}, "Model"},
		{"unknown reasoning effort", llm.Config{BaseURL: "http://127.0.0.1:11434/v1", Model: "m", ReasoningEffort: "extreme"}, "ReasoningEffort"},
		{"negative max tokens", llm.Config{BaseURL: "http://127.0.0.1:11434/v1", Model: "m", MaxTokens: -1}, "MaxTokens"},
		{"negative timeout", llm.Config{BaseURL: "http://127.0.0.1:11434/v1", Model: "m", RequestTimeout: -1}, "RequestTimeout"},
		{"negative idle timeout", llm.Config{BaseURL: "http://127.0.0.1:11434/v1", Model: "m", StreamIdleTimeout: -1}, "StreamIdleTimeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llm.New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("err = %v, want an error naming %s", err, tt.field)
			}
		})
	}
	if _, err := llm.New(llm.Config{BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen3:8b", ReasoningEffort: "high"}); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

func TestNewIgnoresOpenAIEnvironment(t *testing.T) {
	decoy := llmfake.New(t)
	fake := llmfake.New(t)
	t.Setenv("OPENAI_BASE_URL", decoy.URL)
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: yes")
	fake.Push(llmfake.Reply{Text: "ok"})
	c := newClient(t, fake, llm.Config{APIKey: "sk-configured"})

	if _, _, err := generate(t, c, userRequest("hi")); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if err := c.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if n := len(decoy.Requests()); n != 0 {
		t.Fatalf("OPENAI_BASE_URL redirected %d requests", n)
	}
	h := fake.Requests()[0].Header
	if got := h.Get("Authorization"); got != "Bearer sk-configured" {
		t.Errorf("Authorization = %q, want the configured key", got)
	}
	if h.Get("OpenAI-Organization") != "" || h.Get("X-Leak") != "" {
		t.Errorf("environment headers leaked: %v", h)
	}
}

func TestGenerateWithoutAPIKeySendsNoAuthorization(t *testing.T) {
	fake := llmfake.New(t)
	fake.Push(llmfake.Reply{Text: "ok"})
	c := newClient(t, fake, llm.Config{})
	if _, _, err := generate(t, c, userRequest("hi")); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if got := fake.Requests()[0].Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none", got)
	}
}

func TestGenerateMaxTokensFieldForOpenAI(t *testing.T) {
	fake := llmfake.New(t)
	fake.Push(llmfake.Reply{Text: "ok"})
	// Requests to api.openai.com are dialled to the fake.
	fakeHost := strings.TrimPrefix(strings.TrimSuffix(fake.URL, "/v1"), "http://")
	transport := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, fakeHost)
	}}
	c := newClient(t, fake, llm.Config{BaseURL: "http://api.openai.com/v1", MaxTokens: 512, HTTPClient: &http.Client{Transport: transport}})
	if _, _, err := generate(t, c, userRequest("hi")); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	req := fake.Requests()[0]
	// OpenAI's reasoning models reject max_tokens.
	if !hasKey(t, req.Raw, "max_completion_tokens") || hasKey(t, req.Raw, "max_tokens") || req.MaxTokens != 512 {
		t.Errorf("OpenAI must get max_completion_tokens only: %s", req.Raw)
	}
}

func TestPing(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		fake := llmfake.New(t)
		if err := newClient(t, fake, llm.Config{}).Ping(context.Background()); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		base := "http://" + closedAddr(t) + "/v1"
		c, err := llm.New(llm.Config{BaseURL: base, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Ping(context.Background())
		t.Logf("Ping: %v", err)
		if err == nil || !strings.Contains(err.Error(), base+"/models") || !strings.Contains(err.Error(), "refused") {
			t.Errorf("err = %v, want one naming %s/models and the refusal", err, base)
		}
	})
	t.Run("a web page", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html><head><title>Open WebUI</title></head></html>"))
		}))
		defer srv.Close()
		c, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Ping(context.Background())
		want := "llm: GET " + srv.URL + `/models: HTTP 200: the endpoint answered with an HTML page (text/html, "Open WebUI"), not the OpenAI API: check llm.base_url and any proxy in between`
		if err == nil || err.Error() != want || !errors.Is(err, llm.ErrNotOpenAIAPI) {
			t.Errorf("err = %v\nwant  %s (and ErrNotOpenAIAPI)", err, want)
		}
	})
	t.Run("not an OpenAI endpoint", func(t *testing.T) {
		fake := llmfake.New(t)
		u, _ := url.Parse(fake.URL)
		// The fake answers 404 outside /v1.
		c, err := llm.New(llm.Config{BaseURL: u.Scheme + "://" + u.Host + "/api", Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Ping(context.Background())
		t.Logf("Ping: %v", err)
		if err == nil || !strings.Contains(err.Error(), "404") {
			t.Errorf("err = %v, want the 404", err)
		}
	})
}
