package llm

import (
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Error messages end with what to check, in the configuration keys of
// opsgate (llm.api_key, llm.model, llm.base_url, llm.timeout), because the
// person reading them is the one who set those keys.

// statusAdvice says what to check after an HTTP error answer; "" when the
// server's message says enough.
func (c *Client) statusAdvice(status int, code, msg string) string {
	switch {
	case status == http.StatusUnauthorized:
		return c.keyAdvice()
	case status == http.StatusForbidden && c.cfg.APIKey != "":
		return c.keyAdvice() + fmt.Sprintf(", and that it may use llm.model (%q)", c.cfg.Model)
	case status == http.StatusForbidden:
		return c.keyAdvice()
	case modelNotFound(status, code, msg):
		return fmt.Sprintf("check llm.model (%q): it must be a model this endpoint serves (GET %s lists them)", c.cfg.Model, c.endpoint("models"))
	case status == http.StatusNotFound:
		return fmt.Sprintf("check llm.base_url (%s): it usually ends in /v1", c.cfg.BaseURL)
	}
	return ""
}

// keyAdvice is about the key sent (or not) with a rejected request.
func (c *Client) keyAdvice() string {
	s := "check llm.api_key"
	if c.cfg.APIKey == "" {
		s = "no API key was sent: set llm.api_key"
	}
	if c.cfg.APIKeyOrigin != "" {
		s += " (" + c.cfg.APIKeyOrigin + ")"
	}
	return s
}

// modelNotFound recognises an unknown model: OpenAI's code model_not_found,
// or the wording of Ollama ("model 'x' not found") and vLLM ("The model `x`
// does not exist") on a 404.
func modelNotFound(status int, code, msg string) bool {
	if code == "model_not_found" {
		return true
	}
	m := strings.ToLower(msg)
	return status == http.StatusNotFound && strings.Contains(m, "model") &&
		(strings.Contains(m, "not found") || strings.Contains(m, "does not exist"))
}

// noAnswerMessage is the message when RequestTimeout ran out.
func (c *Client) noAnswerMessage() string {
	return fmt.Sprintf("the model server at %s sent no answer within %s (llm.timeout): check that it is up and not overloaded, "+
		"or raise llm.timeout for a model that is slow to start", c.cfg.BaseURL, seconds(c.cfg.RequestTimeout))
}

// silenceMessage is the message when StreamIdleTimeout ran out after
// tokens streamed fragments.
func (c *Client) silenceMessage(tokens int, output bool) string {
	s := fmt.Sprintf("the model stream went silent for %s (llm.stream_idle_timeout) after %d token%s", seconds(c.cfg.StreamIdleTimeout), tokens, plural(tokens))
	if output {
		s += "; the answer is incomplete"
	}
	return s + fmt.Sprintf(": check that the model server at %s is not overloaded", c.cfg.BaseURL)
}

// withAdvice appends advice to a server's message, as a new sentence when
// the message is one.
func withAdvice(msg, advice string) string {
	msg = strings.TrimSpace(msg)
	if advice == "" {
		return msg
	}
	if last, _ := utf8.DecodeLastRuneInString(msg); strings.ContainsRune(".!?", last) {
		first, n := utf8.DecodeRuneInString(advice)
		return msg + " " + string(unicode.ToUpper(first)) + advice[n:]
	}
	return msg + ": " + advice
}

func (c *Client) endpoint(path string) string {
	return strings.TrimSuffix(c.cfg.BaseURL, "/") + "/" + path
}

// seconds writes whole seconds as "60s" rather than time's "1m0s".
func seconds(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
