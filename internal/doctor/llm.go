package doctor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/llm"
	"github.com/opsgate/opsgate/internal/config"
)

func (d *Doctor) checkLLM(ctx context.Context, r *report, cfg *config.Config) {
	model, err := d.Model()
	if err != nil {
		r.fail("llm", "fix llm.* in the configuration", "%v", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, llmTimeout)
	defer cancel()
	if err := model.Ping(ctx); err != nil {
		r.fail("llm", llmHint(cfg, err), "%s at %s: %v", cfg.LLM.Model, cfg.LLM.BaseURL, err)
		return
	}
	r.ok("llm", "%s at %s", cfg.LLM.Model, cfg.LLM.BaseURL)
}

// llmHint says how to fix a failed reach of the model endpoint, from what
// the failure is (its status, its kind) rather than from its wording.
func llmHint(cfg *config.Config, err error) string {
	status := 0
	var me *core.ModelError
	if errors.As(err, &me) {
		status = me.StatusCode
	}
	var opErr *net.OpError
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return keyHint(cfg)
	case status >= 500:
		return "the endpoint, or a proxy in front of it, reports a server error: check that the model server is up and healthy"
	case errors.Is(err, llm.ErrNotOpenAIAPI):
		return fmt.Sprintf("llm.base_url (%s) answers with a web page or text, not the OpenAI API: point it at the API itself (it usually ends in /v1), past any login page or proxy", cfg.LLM.BaseURL)
	case status == http.StatusNotFound:
		return fmt.Sprintf("llm.base_url (%s) has no OpenAI API at that path: it usually ends in /v1 (Ollama: http://HOST:11434/v1)", cfg.LLM.BaseURL)
	case errors.Is(err, context.DeadlineExceeded):
		return "the endpoint took the connection but did not answer: check that the model server is up and not overloaded"
	case config.IsOllama(cfg.LLM.BaseURL) && errors.As(err, &opErr) && cfg.BaseURLDefaulted():
		return fmt.Sprintf("start Ollama (ollama serve) and pull the model (ollama pull %s), or set llm.base_url, or OPENAI_API_KEY to use OpenAI", cfg.LLM.Model)
	case config.IsOllama(cfg.LLM.BaseURL) && errors.As(err, &opErr):
		return fmt.Sprintf("start Ollama (ollama serve) there and pull the model (ollama pull %s), or correct llm.base_url", cfg.LLM.Model)
	default:
		return "check that llm.base_url is reachable from here and speaks the OpenAI API (it should answer GET <base_url>/models)"
	}
}

// keyHint is the fix for a rejected or missing API key.
func keyHint(cfg *config.Config) string {
	switch {
	case cfg.LLM.APIKey == "" && cfg.OpenAIKeyWithheld():
		return "OPENAI_API_KEY is only sent to OpenAI or to OPENAI_BASE_URL, not to this llm.base_url: set llm.api_key (or OPSGATE_LLM_API_KEY) for this endpoint"
	case cfg.LLM.APIKey == "":
		return "this endpoint wants an API key: set llm.api_key (or OPSGATE_LLM_API_KEY)"
	case cfg.APIKeyOrigin() != "":
		return "the endpoint rejected the key: check llm.api_key (" + cfg.APIKeyOrigin() + ")"
	}
	return "the endpoint rejected the key: check llm.api_key"
}
