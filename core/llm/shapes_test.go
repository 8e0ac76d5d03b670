package llm_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/llm"
)

// TestGenerateErrorBodyShapes covers error answers in the shapes servers
// other than OpenAI send, which llmfake does not imitate.
func TestGenerateErrorBodyShapes(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		header    map[string]string
		body      string
		kind      core.ModelErrorKind
		message   string
		retryWait time.Duration
	}{
		{name: "ollama string error", status: 404, body: `{"error":"model 'llama9' not found"}`,
			kind: core.ModelFatal, message: "model 'llama9' not found"},
		{name: "vllm top-level message", status: 400, body: `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","code":400}`,
			kind: core.ModelFatal, message: "max_tokens is too large"},
		{name: "fastapi detail", status: 422, body: `{"detail":"Field required: messages"}`,
			kind: core.ModelFatal, message: "Field required: messages"},
		{name: "proxy html page", status: 502, body: `<html><body><h1>502 Bad Gateway</h1></body></html>`,
			kind: core.ModelTransient, message: "Bad Gateway"},
		{name: "plain text", status: 503, body: "upstream connect error\n",
			kind: core.ModelTransient, message: "upstream connect error"},
		{name: "retry-after-ms wins", status: 429, header: map[string]string{"Retry-After-Ms": "1500", "Retry-After": "9"}, body: `{"error":{"message":"slow down"}}`,
			kind: core.ModelRateLimited, message: "slow down", retryWait: 1500 * time.Millisecond},
		{name: "out of quota is not retried", status: 429, body: `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`,
			kind: core.ModelFatal, message: "You exceeded your current quota"},
		{name: "not implemented is fatal", status: 501, body: ``,
			kind: core.ModelFatal, message: "Not Implemented"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var requests atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = generate(t, c, userRequest("hi"))
			me := modelError(t, err, tt.kind)
			if me.Message != tt.message || me.StatusCode != tt.status || me.RetryAfter != tt.retryWait {
				t.Errorf("got %d %q retry %v, want %d %q retry %v", me.StatusCode, me.Message, me.RetryAfter, tt.status, tt.message, tt.retryWait)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}
