package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecretsListsConfiguredCredentials(t *testing.T) {
	c := &Config{}
	c.LLM.APIKey = "sk-live-0123456789"
	c.Slack.BotToken, c.Slack.SigningSecret = "xoxb-1-2-abcdef", "8f14e45fceea167a"
	c.Store.URL = "postgres://opsgate:pg-pass-4242@db:5432/opsgate"
	c.Tools.Servers = []MCPServer{{
		Name:    "k8s",
		Headers: map[string]string{"Authorization": "Bearer eyJhbGciOi.payload.sig", "Accept": "application/json"},
		Env:     map[string]string{"KUBECONFIG": "/home/sre/.kube/config", "GITHUB_TOKEN": "ghp_abcdefghijklmnop"},
	}}
	want := []string{"8f14e45fceea167a", "Bearer eyJhbGciOi.payload.sig", "eyJhbGciOi.payload.sig",
		"ghp_abcdefghijklmnop", "pg-pass-4242", "sk-live-0123456789", "xoxb-1-2-abcdef"}
	if d := cmp.Diff(want, c.Secrets()); d != "" {
		t.Errorf("Secrets (-want +got):\n%s", d)
	}
}
