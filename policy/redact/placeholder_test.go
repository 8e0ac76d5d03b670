package redact

import (
	"strings"
	"testing"
)

// Issue 21, item 4: placeholders in a runbook about rotating secrets are
// no secrets (docs/design.md §17), and every real value still is.
func TestPlaceholdersAreNoSecrets(t *testing.T) {
	for _, s := range []string{
		"vault kv put secret/reporting/s3 access_key_id=... secret_access_key=...",
		"aws_secret_access_key = …",
		"aws_access_key_id = AKIAXXXXXXXXXXXXXXXX",
		"aws_secret_access_key = xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		"Set `password: changeme` in kind only.",
		"token: REPLACE_ME",
		"api_key: <your key>",
		"client_secret: ***",
		"DB_PASSWORD=example",
		"DB_PASSWORD=example-password",
		"secret: $DB_SECRET",
		"password: ${DB_PASSWORD}",
		"password=$(vault kv get -field=password secret/db)",
		`password: "…"`,
		"    - secretKey: password",
		"      secretKey: db-password",
	} {
		if got := (*Redactor)(nil).String(s); got != s {
			t.Errorf("String(%q) = %q; a placeholder is no secret", s, got)
		}
	}
	for _, tc := range []struct{ in, kind string }{
		{"aws_secret_access_key = 9dG3kR8vQ2pLx7TzW1mNcY5uHb4JsE6fA0oVtK2r", "aws_secret_key"},
		{"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_key"},
		{"aws_access_key_id = AKIA2E0A8F3B244C9986", "aws_access_key"},
		{"password: hunter2-Xq", "password_assignment"},
		{"DB_PASSWORD=changeme2024!", "password_assignment"},
		{"token: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ", "password_assignment"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n", "private_key"},
		{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ", "jwt"},
	} {
		if got := (*Redactor)(nil).String(tc.in); !strings.Contains(got, "[REDACTED:"+tc.kind+"]") {
			t.Errorf("String(%q) = %q; want [REDACTED:%s]", tc.in, got, tc.kind)
		}
	}
}
