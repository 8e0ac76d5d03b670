package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorLLMHints: issue 9, doctor's fix for a model endpoint says what
// to change, and never to set an OPENAI_API_KEY that is set but withheld.
func TestDoctorLLMHints(t *testing.T) {
	const webPage = "<html><head><title>Open WebUI</title></head><body></body></html>"
	tests := []struct {
		name    string
		status  int
		ctype   string
		body    string
		apiKey  string // llm.api_key in the file
		noV1    bool
		env     []string
		problem string // in the FAIL line
		fix     string // with {base} for llm.base_url
	}{
		{name: "OPENAI_API_KEY withheld from a custom endpoint", status: 401, ctype: "application/json", body: `{"error":"Unauthorized"}`,
			env:     []string{"OPENAI_API_KEY", "sk-openai"},
			problem: "HTTP 401: Unauthorized: no API key was sent: set llm.api_key (OPENAI_API_KEY is set but only sent to OpenAI or to OPENAI_BASE_URL)",
			fix:     "OPENAI_API_KEY is only sent to OpenAI or to OPENAI_BASE_URL, not to this llm.base_url: set llm.api_key (or OPSGATE_LLM_API_KEY) for this endpoint"},
		{name: "no key at all", status: 401, ctype: "application/json", body: `{"error":"Unauthorized"}`,
			problem: "HTTP 401: Unauthorized: no API key was sent: set llm.api_key",
			fix:     "this endpoint wants an API key: set llm.api_key (or OPSGATE_LLM_API_KEY)"},
		{name: "key from the file rejected", status: 403, ctype: "application/json", body: `{"error":{"message":"Invalid token"}}`, apiKey: "k-wrong",
			problem: "HTTP 403: Invalid token: check llm.api_key (set in {cfg})",
			fix:     "the endpoint rejected the key: check llm.api_key (set in {cfg})"},
		{name: "a web page", status: 200, ctype: "text/html", body: webPage,
			problem: `HTTP 200: the endpoint answered with an HTML page (text/html, "Open WebUI"), not the OpenAI API`,
			fix:     "llm.base_url ({base}) answers with a web page or text, not the OpenAI API: point it at the API itself (it usually ends in /v1), past any login page or proxy"},
		{name: "a path without the API", status: 404, ctype: "text/plain", body: "404 page not found\n", noV1: true,
			problem: "HTTP 404: 404 page not found: check llm.base_url ({base}): it usually ends in /v1",
			fix:     "llm.base_url ({base}) has no OpenAI API at that path: it usually ends in /v1 (Ollama: http://HOST:11434/v1)"},
		{name: "a proxy's error page", status: 502, ctype: "text/html", body: "<html><title>502 Bad Gateway</title></html>",
			problem: `HTTP 502: the endpoint answered with an HTML page (text/html, "502 Bad Gateway")`,
			fix:     "the endpoint, or a proxy in front of it, reports a server error: check that the model server is up and healthy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			base := srv.URL + "/v1"
			if tt.noV1 {
				base = srv.URL
			}
			dir := t.TempDir()
			cfg := filepath.Join(dir, "opsgate.yaml")
			body := fmt.Sprintf("llm:\n  base_url: %s\n  model: m\n  api_key: %q\nstore:\n  url: sqlite://%s\n", base, tt.apiKey, filepath.Join(dir, "opsgate.db"))
			if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errOut strings.Builder
			code := Main(context.Background(), []string{"doctor", "--config", cfg}, nil, &out, &errOut, testEnv(tt.env...))
			if code != exitError {
				t.Fatalf("doctor exited %d with a failing endpoint\n%s%s", code, out.String(), errOut.String())
			}
			r := strings.NewReplacer("{base}", base, "{cfg}", cfg)
			mustContain(t, "doctor's report", out.String(),
				"FAIL  llm     m at "+base+": llm: GET "+base+"/models: "+r.Replace(tt.problem),
				"              fix: "+r.Replace(tt.fix)+"\n")
			if strings.Contains(out.String(), "set OPENAI_API_KEY") || strings.Contains(out.String(), "or OPENAI_API_KEY") {
				t.Errorf("doctor suggests OPENAI_API_KEY:\n%s", out.String())
			}
		})
	}
}
