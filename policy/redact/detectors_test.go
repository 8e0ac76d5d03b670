package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

// checkBoth fails unless String(in) == want and a stream fed one byte at a
// time releases the same.
func checkBoth(t *testing.T, r *Redactor, in, want string) {
	t.Helper()
	if got := r.String(in); got != want {
		t.Fatalf("String(%q)\n got %q\nwant %q", in, got, want)
	}
	s := r.Stream()
	var got strings.Builder
	for i := 0; i < len(in); i++ {
		got.WriteString(s.Write(in[i : i+1]))
	}
	got.WriteString(s.Flush())
	if got.String() != want {
		t.Fatalf("streamed %q\n got %q\nwant %q", in, got.String(), want)
	}
}

// Issue 10: each built-in detector, on samples as they appear in ops output.
func TestRedactsEachBuiltInDetector(t *testing.T) {
	r := mustNew(t, Options{})
	tests := []struct{ name, in, want string }{
		{"aws_access_key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n",
			"aws_access_key_id = [REDACTED:aws_access_key]\n"},
		{"aws_access_key sts", `"AccessKeyId": "ASIAY34FZKBOKMUTVV7A",`,
			`"AccessKeyId": "[REDACTED:aws_access_key]",`},
		{"aws_secret_key", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
			"AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_key]\n"},
		{"aws_secret_key json", `{"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}`,
			`{"SecretAccessKey": "[REDACTED:aws_secret_key]"}`},
		{"private_key", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oZ0kG3l1a4SYoAoGCCqGSM49\nAwEHoUQDQgAEqIVYZVLCrPZHGHjP17CTW0/+D9Lfw0EkjqF7xB4FivAxzic30tMM\n-----END EC PRIVATE KEY-----\nnext line\n",
			"[REDACTED:private_key]\nnext line\n"},
		{"private_key in json", `{"key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n", "id": 7}`,
			`{"key": "[REDACTED:private_key]\n", "id": 7}`},
		{"private_key truncated", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n[output truncated]\n",
			"[REDACTED:private_key][output truncated]\n"},
		{"private_key as string literals", "key := \"-----BEGIN RSA PRIVATE KEY-----\\n\" +\n\t\"MIIEowIBAAKCAQEAv7qIvaQK\\n\" +\n\t\"-----END RSA PRIVATE KEY-----\\n\"\n",
			"key := \"[REDACTED:private_key]\\n\"\n"},
		{"certificate is not secret", "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----\n",
			"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----\n"},
		{"jwt", "the service account token eyJhbGciOiJSUzI1NiIsImtpZCI6IjRkNDQ0In0.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50In0.dGhpc2lzbm90YXJlYWxzaWduYXR1cmU expired.",
			"the service account token [REDACTED:jwt] expired."},
		{"slack_token", "SLACK_BOT=xoxb-2501234567890-2512345678901-AbCdEfGhIjKlMnOpQrStUvWx\n",
			"SLACK_BOT=[REDACTED:slack_token]\n"},
		{"slack app token", "using xapp-1-A0123456789-1234567890123-0123456789abcdef0123456789abcdef now",
			"using [REDACTED:slack_token] now"},
		{"slack webhook", "posting to https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/AbCdEfGhIjKlMnOpQrStUvWx",
			"posting to https://hooks.slack.com/services/[REDACTED:slack_token]"},
		{"github_token", "remote: https://github.com/example/api (token ghp_16C7e42F292c6912E7710c838347Ae178B4a)",
			"remote: https://github.com/example/api (token [REDACTED:github_token])"},
		{"github fine-grained", "github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01234",
			"[REDACTED:github_token]"},
		{"openai_key", `client = OpenAI(api="sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv12Wx34")`,
			`client = OpenAI(api="[REDACTED:openai_key]")`},
		{"openai legacy", "key sk-T3BlbkFJabcdefghijklmnopqrstuvwxyz0123456789AB ok",
			"key [REDACTED:openai_key] ok"},
		{"authorization header", "> GET /api/v1/namespaces HTTP/1.1\n> Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543\n> Accept: */*\n",
			"> GET /api/v1/namespaces HTTP/1.1\n> Authorization: Bearer [REDACTED:authorization]\n> Accept: */*\n"},
		{"authorization curl", `curl -H "authorization: Basic YWRtaW46czNjcjN0" https://registry.example.com/v2/`,
			`curl -H "authorization: Basic [REDACTED:authorization]" https://registry.example.com/v2/`},
		{"url_password", "postgres://user:S3cr3tPassw0rd!@db.prod.internal:5432/app",
			"postgres://user:[REDACTED:url_password]@db.prod.internal:5432/app"},
		{"url_password with @", "redis://:p@ssw0rd-with-at@redis-master:6379/0",
			"redis://:[REDACTED:url_password]@redis-master:6379/0"},
		{"kubeconfig", "users:\n- name: admin\n  user:\n    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB\n    token: 0123456789abcdef0123456789abcdef\n",
			"users:\n- name: admin\n  user:\n    client-key-data: [REDACTED:kubeconfig]\n    token: [REDACTED:kubeconfig]\n"},
		{"password_assignment env", "DB_PASSWORD=hunter2hunter2 ./migrate --dry-run",
			"DB_PASSWORD=[REDACTED:password_assignment] ./migrate --dry-run"},
		{"password_assignment yaml", "spring:\n  datasource:\n    password: 'Zm9vYmFy!x'\n    secret: abc123xyz\n",
			"spring:\n  datasource:\n    password: '[REDACTED:password_assignment]'\n    secret: [REDACTED:password_assignment]\n"},
		{"password_assignment json", `{"user":"admin","password":"correct horse battery staple","api_key": "k-1234567890"}`,
			`{"user":"admin","password":"[REDACTED:password_assignment]","api_key": "[REDACTED:password_assignment]"}`},
		{"password_assignment flag", "mysql -u root --password s3cretPassw0rd -h db",
			"mysql -u root --password [REDACTED:password_assignment] -h db"},
		{"password_assignment dockerconfigjson", `{"auths":{"registry.example.com":{"auth":"cm9ib3Q6czNjcjN0LXRva2Vu"}}}`,
			`{"auths":{"registry.example.com":{"auth":"[REDACTED:password_assignment]"}}}`},
		{"password_assignment token in a query", "GET /ws?token=0123456789abcdef0123 HTTP/1.1",
			"GET /ws?token=[REDACTED:password_assignment] HTTP/1.1"},
		{"password_assignment query", "GET /login?user=bob&password=letmein123&next=/ HTTP/1.1",
			"GET /login?user=bob&password=[REDACTED:password_assignment]&next=/ HTTP/1.1"},
		{"k8s_secret_data yaml", "apiVersion: v1\ndata:\n  password: cGFzc3dvcmQxMjM=\n  username: YWRtaW4=\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\n",
			"apiVersion: v1\ndata:\n  password: [REDACTED:k8s_secret_data]\n  username: [REDACTED:k8s_secret_data]\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\n"},
		{"k8s_secret_data kind first", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\ntype: kubernetes.io/tls\nstringData:\n  tls.crt: |\n    MIIDdzCCAl+gAwIBAgIE\n  token: plain-text-token-value\n",
			"apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\ntype: kubernetes.io/tls\nstringData:\n  tls.crt: [REDACTED:k8s_secret_data]\n    [REDACTED:k8s_secret_data]\n  token: [REDACTED:k8s_secret_data]\n"},
		{"k8s_secret_data list", "apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    .dockerconfigjson: eyJhdXRocyI6eyJyZWdpc3RyeS5leGFtcGxlLmNvbSI6e319fQ==\n  kind: Secret\n  metadata:\n    name: regcred\nkind: List\n",
			"apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    .dockerconfigjson: [REDACTED:k8s_secret_data]\n  kind: Secret\n  metadata:\n    name: regcred\nkind: List\n"},
		{"k8s_secret_data json", "{\n    \"apiVersion\": \"v1\",\n    \"data\": {\n        \"password\": \"cGFzc3dvcmQxMjM=\"\n    },\n    \"kind\": \"Secret\"\n}\n",
			"{\n    \"apiVersion\": \"v1\",\n    \"data\": {\n        \"password\": \"[REDACTED:k8s_secret_data]\"\n    },\n    \"kind\": \"Secret\"\n}\n"},
		{"k8s_secret_data compact json", `{"apiVersion":"v1","data":{"a":"YWFhYWFhYWE=","b":"YmJiYmJiYmI="},"kind":"Secret"}`,
			`{"apiVersion":"v1","data":{"a":"[REDACTED:k8s_secret_data]","b":"[REDACTED:k8s_secret_data]"},"kind":"Secret"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkBoth(t, r, tt.in, tt.want) })
	}
}

// Issue 10: ordinary ops output (kubectl, git log, logs, manifests, image
// digests, UUIDs, a ConfigMap's base64) comes out unchanged.
func TestNoFalsePositivesOnOrdinaryOpsText(t *testing.T) {
	r := mustNew(t, Options{Patterns: []string{`corp-[A-Za-z0-9]{24}`}, Secrets: []string{"7412589630:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"}})
	texts := map[string]string{
		"git SHAs":             "3f2a9c8e1b7d6f5a4e3c2b1a0f9e8d7c6b5a4f3e 9e8d7c6 a94a8fe5ccb19ba61c4c0873d391e987982fbbd3\n",
		"UUIDs":                "uid: 550e8400-e29b-41d4-a716-446655440000 trace=4bf92f3577b34da6a3ce929d0e0e4736\n",
		"image digests":        "nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31 sha512:cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e\n",
		"secret names":         "auth:\n  existingSecret: pg-auth\n  secretKeys:\n    adminPasswordKey: admin-password\n",
		"secret words":         "The secret rotation job failed; the token is valid for 1h and password resets are rate limited.\n",
		"urls":                 "https://user@example.com/path?token_hint=none http://localhost:8080/ ftp://files.example.com/a:b\n",
		"base64 prose":         "config: eyJmZWF0dXJlIjoib24ifQ== banner: SGVsbG8sIFdvcmxkIQ==\n",
		"configmap kind first": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  banner: SGVsbG8sIFdvcmxkIQ==\n",
	}
	for _, d := range ordinaryDocs(t) {
		texts[d.name] = d.text
	}
	for name, text := range texts {
		t.Run(name, func(t *testing.T) { checkBoth(t, r, text, text) })
	}
}

// Issue 10: every secret opsgate was configured with is redacted, also
// when printed base64-encoded or URL-escaped; secrets shorter than 8 bytes
// are ignored.
func TestConfiguredSecretsAreRedacted(t *testing.T) {
	bot := "7412589630:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	pw := "p@ss/w0rd+with spaces"
	r := mustNew(t, Options{Secrets: []string{bot, pw, "short"}})
	const m = "[REDACTED:configured]"

	checkBoth(t, r, "calling https://api.telegram.org/bot"+bot+"/getMe", "calling https://api.telegram.org/bot"+m+"/getMe")
	checkBoth(t, r, "webhook secret in "+url.QueryEscape(pw)+" and "+url.PathEscape(pw), "webhook secret in "+m+" and "+m)
	checkBoth(t, r, "b64 "+base64.StdEncoding.EncodeToString([]byte(bot))+" end", "b64 "+m+" end")
	checkBoth(t, r, "a short secret stays: short", "a short secret stays: short")

	// Inside a longer base64 text, at each alignment, nothing of the
	// secret's encoding survives.
	for _, prefix := range []string{"", "a", "ab", "user:"} {
		blob := base64.StdEncoding.EncodeToString([]byte(prefix + bot + "\n...and more"))
		got := r.String("blob " + blob)
		if !strings.Contains(got, m) {
			t.Errorf("prefix %q: base64 blob not redacted: %q", prefix, got)
		}
		core := base64.StdEncoding.EncodeToString([]byte(bot))[4:40]
		if p := leak(got, []string{core}); p != "" {
			t.Errorf("prefix %q: %q of the encoded secret is left in %q", prefix, p, got)
		}
	}

	if _, err := New(Options{Secrets: []string{strings.Repeat("x", maxSecretLen+1)}}); err == nil || !strings.Contains(err.Error(), "redact: secret 1") {
		t.Errorf("a secret longer than %d bytes: err = %v, want one naming it", maxSecretLen, err)
	}
}

// Issue 10: redact.patterns are extra detectors, matched across stream
// fragments like the built-in ones.
func TestUserPatterns(t *testing.T) {
	r := mustNew(t, Options{Patterns: []string{`corp-[A-Za-z0-9]{24}`, `\bINC[0-9]{6}\b`, `(?i)internal-[a-f0-9]{16}`}})
	const m = "[REDACTED:pattern]"
	checkBoth(t, r, "key corp-Ab12Cd34Ef56Gh78Ij90Kl12 in use", "key "+m+" in use")
	checkBoth(t, r, "see INC004211, not XINC004211 or INC0042119", "see "+m+", not XINC004211 or INC0042119")
	checkBoth(t, r, "id INTERNAL-0123456789abcdef.", "id "+m+".")
	checkBoth(t, r, "corp-short stays", "corp-short stays")

	secret := "corp-Zx98Yw76Vu54Ts32Rq10Po98"
	for seed := range uint64(4) {
		got := streamChecked(t, r, splitEvery(secret+" and again "+secret+"\n", int(seed)+1), []string{secret})
		if got != m+" and again "+m+"\n" {
			t.Fatalf("streamed: %q", got)
		}
	}
}

func splitEvery(s string, n int) []string {
	var out []string
	for len(s) > n {
		out, s = append(out, s[:n]), s[n:]
	}
	return append(out, s)
}

// The prefix regexp of a pattern accepts every prefix of every match: what
// makes a Stream hold a pattern's candidate back.
func TestPatternPrefixAcceptsEveryPrefixOfAMatch(t *testing.T) {
	cases := map[string][]string{
		`corp-[A-Za-z0-9]{24}`:            {"corp-Ab12Cd34Ef56Gh78Ij90Kl12"},
		`\bINC[0-9]{6}\b`:                 {"INC004211"},
		`(?i)internal-(?:[a-f0-9]{4}-?)+`: {"Internal-abcd-0123-ffff"},
		`tok_(live|test)_[a-z]{3,}x?`:     {"tok_live_abcdefx", "tok_test_abc"},
	}
	for src, matches := range cases {
		p, err := compilePattern(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		for _, m := range matches {
			for i := 1; i <= len(m); i++ {
				text := "some text " + m[:i]
				loc := p.prefix.FindStringIndex(text)
				if loc == nil || loc[0] > len("some text ") {
					t.Errorf("%s: prefix %q of %q is not held (loc %v)", src, m[:i], m, loc)
				}
			}
		}
	}
}

// Issue 10: a pattern that does not compile, or that matches the empty
// string (it would redact between every two bytes), is an error naming it.
func TestBadPatternIsAnError(t *testing.T) {
	for _, p := range []string{`corp-[A-Z`, `(unclosed`, `a*`, `\b`, `(?:x|)`} {
		_, err := New(Options{Patterns: []string{`ok-[0-9]{4}`, p}})
		if err == nil {
			t.Errorf("pattern %q: no error", p)
			continue
		}
		if !strings.Contains(err.Error(), "redact: pattern 2") || !strings.Contains(err.Error(), p) {
			t.Errorf("pattern %q: error %q does not name it", p, err)
		}
	}
}

// A bare word where a Secret's JSON data map wants a value is not JSON:
// the JSON mode hands it back whole, so the detectors still see it (a
// configured secret, an Authorization line, a private key). Found by
// FuzzStreamEqualsWhole.
func TestJSONDataBareWordIsScannedAgain(t *testing.T) {
	r := mustNew(t, Options{Secrets: []string{"hunter2hunter2"}})
	for _, text := range []string{
		`0\"data\":{\"00":` + "\nhunter2hunter2\n} " + `\"kind\":\"Secret"0`,
		`\"data\":{\"00\":` + "\nAuthorization: Bearer abcdefghijklmnop0123\n} " + `\"kind\":\"Secret\"`,
		`{"data": {"a": ` + "\nAuthorization: Bearer abcdefghijklmnop0123\n" + `}, "kind": "Secret"}`,
		`{"data": {"a": 12, "b": true, "c": "YQ=="}, "kind": "Secret"}`,
		// A private key where a value was expected: taken as a bare value,
		// its BEGIN line ended the value and its body was shown.
		`0000\"data\":{\"00":` + "\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1xQ7r2Zk\n-----END RSA PRIVATE KEY-----\n00000000} " + `\"kind\":\"Secret"`,
	} {
		got := r.String(text)
		if s := leak(got, []string{"hunter2hunter2", "abcdefghijklmnop0123", "YQ==", "MIIEpAIBAAKCAQEA1xQ7r2Zk"}); s != "" {
			t.Errorf("%q leaks %q:\n%q", text, s, got)
		}
		for n := 1; n <= 7; n++ {
			s := r.Stream()
			var b strings.Builder
			for _, frag := range splitEvery(text, n) {
				b.WriteString(s.Write(frag))
			}
			if b.WriteString(s.Flush()); b.String() != got {
				t.Errorf("%q in pieces of %d: %q, whole: %q", text, n, b.String(), got)
			}
		}
	}
}

// A key block whose END line never came ends at the first byte a key
// cannot hold; when that is in the middle of a line, whose start was
// already dropped with the key, the rest of the line is dropped too: its
// key name is gone, so its secret could not be told (found by
// FuzzStreamEqualsWhole). The next line is text again.
func TestTruncatedKeyDropsTheLineItEndsIn(t *testing.T) {
	r := mustNew(t, Options{})
	text := "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIB\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nnext line"
	got := r.String(text)
	if s := leak(got, []string{"MIIEpAIB", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}); s != "" || !strings.HasSuffix(got, "\nnext line") {
		t.Errorf("String = %q", got)
	}
	for n := 1; n <= 7; n++ {
		s := r.Stream()
		var b strings.Builder
		for _, frag := range splitEvery(text, n) {
			b.WriteString(s.Write(frag))
		}
		if b.WriteString(s.Flush()); b.String() != got {
			t.Errorf("in pieces of %d: %q, whole: %q", n, b.String(), got)
		}
	}
}
