package redact

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core"
)

// FuzzStreamEqualsWhole: for any text and any split into fragments, a
// Stream releases in total exactly String of the whole text, and never
// holds back more than maxHold (plus an incomplete rune). No configured
// secret survives in either, wherever it is in the text, and neither does
// a secret of the detectors' seed set planted on a line of its own
// anywhere in the text.
func FuzzStreamEqualsWhole(f *testing.F) {
	r := mustNew(f, Options{
		Patterns: []string{`corp-[A-Za-z0-9]{24}`, `\bINC[0-9]{6}\b`},
		Secrets:  configured,
	})
	// Short seeds, one per detector: a long seed makes every mutation (and
	// the minimising of each new input) slow.
	for i, s := range []string{
		"aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1x\n-----END RSA PRIVATE KEY-----\nok",
		"t eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0xx.c2lnbmF0dXJl x",
		"DATABASE_URL=postgres://app:hunter2hunter2@db:5432/x the password is",
		"apiVersion: v1\ndata:\n  a: YWFhYWFhYWE=\nkind: Secret\n---\ndata:\n  b: Yg==\nkind: ConfigMap\n",
		`{"data": {"a": "YQ=="}, "kind": "Secret", "x": {\"data\":{\"k\":\"dg==\"},\"kind\":\"Secret\"}}`,
		"Authorization: Bearer abc\r\n--password s3cr3t -x \"api_key\": \"k\"",
		"corp-Ab12Cd34Ef56Gh78Ij90Kl12 xINC123456 INC123456 hunter2hunt",
		"ghp_16C7e42F292c6912E7710c838347Ae178B4a xoxb-1234567890-abcdefghij sk-proj-abcdefghijklmnopqrstuvwx",
		"é€😀\xff\xfe7412589630:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
	} {
		f.Add(s, uint64(i), uint8(i), uint8(i), uint16(7*i))
	}
	f.Fuzz(func(t *testing.T, text string, seed uint64, maxLen, plant uint8, at uint16) {
		if len(text) > 4096 {
			t.Skip("long texts only slow the search down")
		}
		p := planted[int(plant)%len(planted)]
		before := strings.Count(text, p.secret) // the text's own, in any context
		cut := int(at) % (len(text) + 1)
		text = text[:cut] + "\n" + p.line + "\n" + text[cut:]
		want := r.String(text)
		if strings.Count(want, p.secret) > before {
			t.Fatalf("String leaves the planted %q in\n%q", p.secret, want)
		}
		for _, secret := range configured {
			if strings.Contains(want, secret) {
				t.Fatalf("String leaves the configured %q in\n%q", secret, want)
			}
		}
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		s := r.Stream()
		var got strings.Builder
		for _, frag := range split(text, rng, 1+int(maxLen%8)) {
			got.WriteString(s.Write(frag))
			if s.held() > maxHold+8 {
				t.Fatalf("%d bytes held back", s.held())
			}
		}
		got.WriteString(s.Flush())
		if got.String() != want {
			t.Fatalf("streamed\n%q\nString\n%q", got.String(), want)
		}
	})
}

// FuzzEventsTokensAddUpToTheGeneration: through the engine's display
// filter, for any text and split, the token events of a generation
// (without the empty ones, which the engine drops) add up to exactly its
// generation.complete text, which is String of the whole text (docs/design.md §16).
func FuzzEventsTokensAddUpToTheGeneration(f *testing.F) {
	r := mustNew(f, Options{})
	for i, s := range []string{
		"w1",
		"w1 w2 w3 w4 w5 w6 w7",
		"the token ghp_16C7e42F292c6912E7710c838347Ae178B4a",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1x\n",
		"password: hunter2",
	} {
		f.Add(s, uint64(i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, text string, seed uint64, maxLen uint8) {
		if len(text) > 4096 {
			t.Skip("long texts only slow the search down")
		}
		display := r.Events()
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		var shown []core.Event
		show := func(ev core.Event) {
			ev.RunID = "run"
			shown = display(shown, ev)
		}
		show(core.Event{Type: core.EventGenerationStart})
		for _, frag := range split(text, rng, 1+int(maxLen%8)) {
			show(core.Event{Type: core.EventToken, Text: frag})
		}
		show(core.Event{Type: core.EventTokenUsage})
		show(core.Event{Type: core.EventGenerationComplete, Text: text})
		var tokens strings.Builder
		for _, ev := range shown {
			if ev.Type == core.EventToken {
				tokens.WriteString(ev.Text)
			}
		}
		last := shown[len(shown)-1]
		if last.Type != core.EventGenerationComplete || last.Text != tokens.String() || last.Text != r.String(text) {
			t.Fatalf("tokens %q, generation.complete %q, String %q", tokens.String(), last.Text, r.String(text))
		}
	})
}

// configured are FuzzStreamEqualsWhole's configured secrets.
var configured = []string{"7412589630:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "hunter2hunter2"}

// planted are lines of the detectors' seed set, each with the secret it
// holds, which FuzzStreamEqualsWhole puts anywhere in its text.
var planted = []struct{ line, secret string }{
	{"aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"},
	{"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1xQ7r2Zk\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA1xQ7r2Zk"},
	{"token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0xx.c2lnbmF0dXJl", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0xx.c2lnbmF0dXJl"},
	{"DATABASE_URL=postgres://app:s3cretPassw0rd@db:5432/x", "s3cretPassw0rd"},
	{"Authorization: Bearer abcdefghijklmnop0123", "abcdefghijklmnop0123"},
	{"ghp_16C7e42F292c6912E7710c838347Ae178B4a", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"},
	{"xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"},
	{"sk-proj-abcdefghijklmnopqrstuvwx", "sk-proj-abcdefghijklmnopqrstuvwx"},
	{"corp-Ab12Cd34Ef56Gh78Ij90Kl12", "corp-Ab12Cd34Ef56Gh78Ij90Kl12"},
	{"hunter2hunter2", "hunter2hunter2"},
}
