package config

import (
	"net/url"
	"slices"
	"strings"
)

// Secrets are the secret values opsgate was configured with: the model's
// API key, the chat platforms' tokens and signing secrets, the store's
// password, and the MCP
// servers' header and environment values whose names say they are
// credentials. The redactor hides each wherever it appears (docs/design.md §11).
func (c *Config) Secrets() []string {
	out := []string{c.LLM.APIKey, c.Telegram.Token, c.Telegram.WebhookSecret,
		c.Slack.BotToken, c.Slack.AppToken, c.Slack.SigningSecret, c.Discord.Token}
	// The store's password (postgres://user:PASSWORD@host/db).
	if u, err := url.Parse(c.Store.URL); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw)
		}
	}
	for _, s := range c.Tools.Servers {
		for name, v := range s.Headers {
			if secretName(name) {
				out = append(out, v, strings.TrimSpace(strings.TrimPrefix(v, "Bearer ")))
			}
		}
		for name, v := range s.Env {
			if secretName(name) {
				out = append(out, v)
			}
		}
	}
	out = slices.DeleteFunc(out, func(s string) bool { return s == "" })
	slices.Sort(out)
	return slices.Compact(out)
}

// secretName reports whether a header or variable name is a credential's
// (Authorization, X-Api-Key, GITHUB_TOKEN, DB_PASSWORD…). A path or a
// namespace in KUBECONFIG or NAMESPACE is not, and redacting it would only
// hide what the on-call engineer needs to read.
func secretName(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"AUTH", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL", "COOKIE"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
