package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// serve mounts the console at / beside the API, and the more specific
// routes still win: health, metrics and the API answer as before.
func TestServeMountsConsole(t *testing.T) {
	dir := t.TempDir()
	model := llmfake.New(t)
	// A schedule gives serve something to do without a chat.
	s := serveConfig(t, writeConfig(t, dir, model.URL, "", "schedules:\n  - {name: daily, cron: '@daily', prompt: 'hi', target: log}\n"))

	resp, err := http.Get(s.base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("GET / = %d %v, want the console's page under its CSP", resp.StatusCode, resp.Header)
	}
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/healthz", 200, "ok\n"},
		{"/readyz", 0, `"components"`},
		{"/metrics", 200, "# HELP"},
		{"/api/v1/schedules", 401, `"unauthorized"`},
		{"/console/app.js", 200, "import"},
		{"/nope", 404, "404 page not found"},
	} {
		body, code := get(t, s.base+tc.path)
		if (tc.code != 0 && code != tc.code) || !strings.Contains(body, tc.body) {
			t.Errorf("GET %s = %d %.200q, want %d with %q", tc.path, code, body, tc.code, tc.body)
		}
	}
}
