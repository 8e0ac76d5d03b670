package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

var tokenLine = regexp.MustCompile(`^og_[A-Za-z0-9_-]{43}\n$`)

// createToken runs `opsgate token create` and returns the token and its id.
func createToken(t *testing.T, cfg, person string) (secret, id string) {
	t.Helper()
	code, stdout, stderr := runMain(t, testEnv(), "token", "create", "--person", person, "--config", cfg)
	if code != exitOK || !tokenLine.MatchString(stdout) {
		t.Fatalf("token create: exit %d, stdout %q (want the token alone), stderr %q", code, stdout, stderr)
	}
	m := regexp.MustCompile(`token (tok_[0-9a-f]+) created for api:` + person).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("token create: stderr %q names no token id", stderr)
	}
	return strings.TrimSpace(stdout), m[1]
}

// apiGet fetches path from a serve as token and returns the status.
func apiGet(t *testing.T, s *served, token, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.base+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// token create / list / revoke work before and while serve runs: a token
// created either way opens /api/v1 on the running serve, list never shows
// a token, a revoked token is refused at once, and no token is logged.
func TestTokenCommands(t *testing.T) {
	dir := t.TempDir()
	model := llmfake.New(t)
	cfg := writeConfig(t, dir, model.URL, "", "schedules:\n  - {name: daily, cron: '@daily', prompt: 'hi', target: log}\n")
	alice, aliceID := createToken(t, cfg, "alice")

	s := serveConfig(t, cfg)
	if code, body := apiGet(t, s, "", "/api/v1/schedules"); code != http.StatusUnauthorized || !strings.Contains(body, `"unauthorized"`) {
		t.Errorf("without a token: %d %s, want 401", code, body)
	}
	if code, body := apiGet(t, s, alice, "/api/v1/schedules"); code != http.StatusOK || !strings.Contains(body, `"name":"daily"`) {
		t.Errorf("with the token made before serve: %d %s, want 200 listing daily", code, body)
	}
	bob, _ := createToken(t, cfg, "bob")
	if code, body := apiGet(t, s, bob, "/api/v1/conversations"); code != http.StatusOK {
		t.Errorf("with the token made while serving: %d %s, want 200", code, body)
	}

	code, stdout, stderr := runMain(t, testEnv(), "token", "list", "--config", cfg)
	if code != exitOK {
		t.Fatalf("token list: exit %d, %s", code, stderr)
	}
	mustContain(t, "token list", stdout, "ID", "PERSON", aliceID, "alice", "bob")
	if strings.Contains(stdout, alice) || strings.Contains(stdout, bob) || strings.Contains(stdout, "og_") {
		t.Errorf("token list shows a token:\n%s", stdout)
	}

	if code, stdout, stderr := runMain(t, testEnv(), "token", "revoke", aliceID, "--config", cfg); code != exitOK || stdout != "revoked "+aliceID+"\n" {
		t.Fatalf("token revoke: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, body := apiGet(t, s, alice, "/api/v1/schedules"); code != http.StatusUnauthorized {
		t.Errorf("with the revoked token: %d %s, want 401", code, body)
	}
	if code, body := apiGet(t, s, bob, "/api/v1/schedules"); code != http.StatusOK {
		t.Errorf("bob's token after alice's was revoked: %d %s, want 200", code, body)
	}
	code, stdout, _ = runMain(t, testEnv(), "token", "list", "--config", cfg)
	if code != exitOK || !regexp.MustCompile(aliceID+`\s+alice\s+\S+\s+\d{4}-`).MatchString(stdout) {
		t.Errorf("token list after revoking: exit %d\n%s\nwant alice's token revoked", code, stdout)
	}

	if code, _, stderr := runMain(t, testEnv(), "token", "revoke", "tok_nope", "--config", cfg); code != exitError || !strings.Contains(stderr, `no token "tok_nope"`) {
		t.Errorf("revoking an unknown token: exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := runMain(t, testEnv(), "token", "create", "--config", cfg); code != exitUsage {
		t.Errorf("token create without --person: exit %d, want %d", code, exitUsage)
	}
	s.stop(t)
	if log := s.log.String(); strings.Contains(log, alice) || strings.Contains(log, bob) {
		t.Errorf("serve logged a token:\n%s", log)
	}
}

// A token for a person the policy does not map to api:<person> has no
// role: create says so, and still creates it; doctor lists it.
func TestTokenCreateWarnsAboutAnUnmappedPerson(t *testing.T) {
	dir := t.TempDir()
	model := llmfake.New(t)
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte("people:\n  carol: {api: carol}\n  erin: {slack: U0ERIN}\nroles:\n  sre: [carol, erin]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, model.URL, "", "policy:\n  file: "+pol+"\n")
	for person, warned := range map[string]bool{"carol": false, "erin": true} {
		code, stdout, stderr := runMain(t, testEnv(), "token", "create", "--person", person, "--config", cfg)
		if code != exitOK || !tokenLine.MatchString(stdout) {
			t.Fatalf("token create --person %s: exit %d, stdout %q, stderr %q", person, code, stdout, stderr)
		}
		if got := strings.Contains(stderr, "warning: "+pol+" maps no person to api:"+person); got != warned {
			t.Errorf("token create --person %s: warned %v, want %v: %q", person, got, warned, stderr)
		}
	}
	// doctor says the same of the tokens in use.
	_, stdout, _ := runMain(t, testEnv(), "doctor", "--config", cfg)
	mustContain(t, "doctor", stdout, "2 API token(s) in use", "maps no person to api:erin")
	if strings.Contains(stdout, "api:carol, so") {
		t.Errorf("doctor warns about carol, whom the policy maps:\n%s", stdout)
	}
}
