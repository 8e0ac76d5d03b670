package llm

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/opsgate/opsgate/core"
)

// Config configures a Client.
type Config struct {
	// BaseURL is any OpenAI-compatible endpoint, e.g.
	// https://api.openai.com/v1 or http://127.0.0.1:11434/v1.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends no Authorization header
	// (Ollama and most local servers need none).
	APIKey string
	Model  string
	// ReasoningEffort is sent as reasoning_effort: "" (not sent), none,
	// minimal, low, medium, high, xhigh.
	ReasoningEffort string
	// MaxTokens bounds the answer; 0 sends no bound. It is sent as
	// max_completion_tokens to OpenAI and Azure OpenAI, whose reasoning
	// models reject max_tokens, and as max_tokens everywhere else, because
	// Ollama reads only max_tokens and vLLM and LiteLLM read both.
	MaxTokens int
	// HTTPClient is optional. Its Timeout, if any, bounds whole streams.
	HTTPClient *http.Client
	// RequestTimeout, when set, bounds the time from sending a request to its
	// first streamed chunk (response headers included), not the whole stream.
	// Running out counts as a transient failure.
	RequestTimeout time.Duration
	// StreamIdleTimeout, when set, bounds the silence between two chunks
	// once the first has arrived: a server that stops sending mid-answer
	// ends the attempt instead of holding it forever. Running out is a
	// transient failure before any output and a fatal one after (the user
	// has seen part of an answer, which must not be repeated or kept).
	StreamIdleTimeout time.Duration
	// APIKeyOrigin, when set, goes with the advice on an HTTP 401 or 403:
	// where APIKey came from, or why none is sent (e.g. "set by
	// OPENAI_API_KEY").
	APIKeyOrigin string
}

// Client is a core.Model over an OpenAI-compatible endpoint. It is safe for
// concurrent use.
type Client struct {
	cfg    Config
	chat   openai.ChatCompletionService
	models openai.ModelService
	// completionTokens: MaxTokens goes out as max_completion_tokens.
	completionTokens bool
}

var _ core.Model = (*Client)(nil)

var reasoningEfforts = []string{"", "none", "minimal", "low", "medium", "high", "xhigh"}

// New checks cfg and returns a client. It does not touch the network.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		return nil, fmt.Errorf("llm: BaseURL is required (e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1)")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: BaseURL %q: want an http or https URL such as http://127.0.0.1:11434/v1", cfg.BaseURL)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("llm: Model is required")
	}
	if !slices.Contains(reasoningEfforts, cfg.ReasoningEffort) {
		return nil, fmt.Errorf("llm: ReasoningEffort %q: want one of none, minimal, low, medium, high, xhigh, or empty", cfg.ReasoningEffort)
	}
	if cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("llm: MaxTokens %d: want 0 (no limit) or more", cfg.MaxTokens)
	}
	if cfg.RequestTimeout < 0 {
		return nil, fmt.Errorf("llm: RequestTimeout %v: want 0 (none) or more", cfg.RequestTimeout)
	}
	if cfg.StreamIdleTimeout < 0 {
		return nil, fmt.Errorf("llm: StreamIdleTimeout %v: want 0 (none) or more", cfg.StreamIdleTimeout)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithMiddleware(answerMiddleware),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	// The services are built directly rather than through openai.NewClient,
	// which layers OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_CUSTOM_HEADERS and
	// the like under every client: a stray variable must neither redirect a
	// configured client nor leak organisation headers to a third-party server.
	return &Client{
		cfg:              cfg,
		chat:             openai.NewChatCompletionService(opts...),
		models:           openai.NewModelService(opts...),
		completionTokens: isOpenAIHost(u.Hostname()),
	}, nil
}

// Ping lists the endpoint's models (GET models) to check that it can be
// reached, speaks the OpenAI API and accepts the key. The error says which.
func (c *Client) Ping(ctx context.Context) error {
	if c.cfg.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.RequestTimeout)
		defer cancel()
	}
	endpoint := c.endpoint("models")
	if _, err := c.models.List(ctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("llm: GET %s: no answer: %w", endpoint, ctx.Err())
		}
		return &pingError{endpoint: endpoint, err: c.classify(err, false)}
	}
	return nil
}

// pingError reads as a diagnosis for `opsgate doctor`; it unwraps to the
// *core.ModelError.
type pingError struct {
	endpoint string
	err      *core.ModelError
}

func (e *pingError) Error() string {
	msg := e.err.Message
	if e.err.StatusCode != 0 {
		msg = fmt.Sprintf("HTTP %d: %s", e.err.StatusCode, msg)
	}
	// Answers with a status carry their advice already.
	if e.err.StatusCode == 0 && e.err.Kind == core.ModelTransient {
		msg += " (is the server running, and is llm.base_url right?)"
	}
	return fmt.Sprintf("llm: GET %s: %s", e.endpoint, msg)
}

func (e *pingError) Unwrap() error { return e.err }

// defaultHTTPClient has no overall timeout, which would cut long streams.
func defaultHTTPClient() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		return &http.Client{Transport: t.Clone()}
	}
	return &http.Client{Transport: http.DefaultTransport}
}

func isOpenAIHost(host string) bool {
	host = strings.ToLower(host)
	return host == "api.openai.com" || strings.HasSuffix(host, ".openai.azure.com")
}
