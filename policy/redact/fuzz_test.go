package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// FuzzStreamEqualsWhole: for any text and any split into fragments, a
// Stream releases in total exactly String of the whole text, and never
// holds back more than maxHold (plus an incomplete rune).
func FuzzStreamEqualsWhole(f *testing.F) {
	r := mustNew(f, Options{
		Patterns: []string{`corp-[A-Za-z0-9]{24}`, `\bINC[0-9]{6}\b`},
		Secrets:  []string{"7412589630:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "hunter2hunter2"},
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
		f.Add(s, uint64(i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, text string, seed uint64, maxLen uint8) {
		if len(text) > 4096 {
			t.Skip("long texts only slow the search down")
		}
		want := r.String(text)
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
