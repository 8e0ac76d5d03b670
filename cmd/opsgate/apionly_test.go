package main

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// Issue 20 acceptance 8 (docs/design.md §16): serve with the HTTP API and an
// unexpired token but no chat platform and no schedule is serving
// something: it starts without --allow-empty, /readyz is 200 and a
// message posted through the API is answered. A revoked token alone is
// still nothing to serve.
func TestServeAPIOnlyStartsWithAToken(t *testing.T) {
	dir := t.TempDir()
	model := llmfake.New(t)
	cfg := writeConfig(t, dir, model.URL, "", "")

	_, revokedID := createToken(t, cfg, "alice")
	if code, _, stderr := runMain(t, testEnv(), "token", "revoke", revokedID, "--config", cfg); code != exitOK {
		t.Fatalf("token revoke: exit %d: %s", code, stderr)
	}
	code, _, stderr := runMain(t, testEnv(), "serve", "--config", cfg)
	if code != exitError || !strings.Contains(stderr, "nothing to serve") || !strings.Contains(stderr, "opsgate token create") {
		t.Fatalf("serve with a revoked token only: exit %d, stderr %q; want 1, nothing to serve, and how to make a token", code, stderr)
	}

	token, _ := createToken(t, cfg, "alice")
	s := serveConfig(t, cfg) // no --allow-empty
	if code, r := s.readyz(t); code != http.StatusOK {
		t.Errorf("GET /readyz = %d %+v, want 200", code, r)
	}
	if strings.Contains(s.log.String(), "serving nothing") {
		t.Errorf("serve says it serves nothing:\n%s", s.log)
	}

	model.Push(llmfake.Reply{Text: "All quiet on the API."})
	req, err := http.NewRequest("POST", s.base+"/api/v1/conversations/api:only/messages", strings.NewReader(`{"text":"anything to report?"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("POST a message = %d %s, want an event stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var completed string
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); { // the stream ends after completed
		if line := sc.Text(); strings.HasPrefix(line, "data: ") && strings.Contains(line, `"type":"completed"`) {
			completed = line
		}
	}
	if !strings.Contains(completed, "All quiet on the API.") {
		t.Errorf("the stream's completed event = %q, want the answer", completed)
	}
}
