package llm_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
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
			kind: core.ModelTransient, message: `the endpoint answered with an HTML page (text/html, "502 Bad Gateway"), not the OpenAI API`},
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
			// The server's message comes first; advice may follow.
			if !strings.HasPrefix(me.Message, tt.message) || me.StatusCode != tt.status || me.RetryAfter != tt.retryWait {
				t.Errorf("got %d %q retry %v, want %d %q… retry %v", me.StatusCode, me.Message, me.RetryAfter, tt.status, tt.message, tt.retryWait)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

// TestGenerateSuccessfulAnswersThatAreNotTheAPI covers 200 answers in a
// format the API never uses, and one in the API's format mislabelled.
func TestGenerateSuccessfulAnswersThatAreNotTheAPI(t *testing.T) {
	const sse = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"fine\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	tests := []struct {
		name        string
		contentType string
		body        string
		message     string // empty: the answer is read as a stream
	}{
		{name: "plain text", contentType: "text/plain", body: "Hello from nginx\nversion 1.25\n",
			message: `the endpoint answered with text/plain ("Hello from nginx"), not the OpenAI API: check llm.base_url and any proxy in between`},
		{name: "unlabelled html", contentType: "application/octet-stream", body: "  <!DOCTYPE html><html><head><title>Jenkins &amp; friends</title></head></html>",
			message: `the endpoint answered with an HTML page (application/octet-stream, "Jenkins & friends"), not the OpenAI API: check llm.base_url and any proxy in between`},
		{name: "event stream labelled as text", contentType: "text/plain; charset=utf-8", body: sse},
		{name: "event stream without a content type", body: sse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = []string{tt.contentType}
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			resp, _, err := generate(t, c, userRequest("hi"))
			if tt.message == "" {
				if err != nil || resp.Message.Content != "fine" {
					t.Fatalf("got %q, %v; want the streamed answer", resp.Message.Content, err)
				}
				return
			}
			me := modelError(t, err, core.ModelFatal)
			if me.Message != tt.message || me.StatusCode != 200 || !errors.Is(err, llm.ErrNotOpenAIAPI) {
				t.Errorf("got %d %q (ErrNotOpenAIAPI: %v), want 200 %q", me.StatusCode, me.Message, errors.Is(err, llm.ErrNotOpenAIAPI), tt.message)
			}
		})
	}
}
