package main

import (
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// The container health check of images without curl: 0 while serve's
// /healthz answers 200, 1 when nothing answers.
func TestHealthcheckCommand(t *testing.T) {
	dir := t.TempDir()
	model := llmfake.New(t)
	cfg := writeConfig(t, dir, model.URL, "", "schedules:\n  - {name: daily, cron: '@daily', prompt: 'hi', target: log}\n")
	s := serveConfig(t, cfg)
	addr := strings.TrimPrefix(s.base, "http://")
	code, stdout, stderr := runMain(t, testEnv("OPSGATE_SERVER_LISTEN", addr), "healthcheck", "--config", cfg)
	if code != exitOK || stdout != "ok\n" {
		t.Fatalf("healthcheck while serving: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	s.stop(t)
	code, _, stderr = runMain(t, testEnv("OPSGATE_SERVER_LISTEN", addr), "healthcheck", "--config", cfg)
	if code != exitError || !strings.Contains(stderr, "opsgate: healthcheck: ") {
		t.Fatalf("healthcheck after serve stopped: exit %d, stderr %q", code, stderr)
	}
}
