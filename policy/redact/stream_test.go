package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Issue 10, acceptance 5 (unit level): a tool result with an AWS key pair, a
// PEM private key, a JWT, a postgres URL with a password and a Kubernetes
// Secret's data, streamed one or two bytes per token, never shows 8 bytes
// of a secret, and ends with each secret replaced by [REDACTED:<kind>].
func TestStreamNeverShowsASecretPrefix(t *testing.T) {
	r := mustNew(t, Options{})
	d := toolResultDoc()
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 1))
		maxLen := 2
		if seed == 0 {
			maxLen = 1
		}
		got := streamChecked(t, r, split(d.text, rng, maxLen), d.secrets)
		if got != d.want {
			t.Fatalf("seed %d: streamed text:\n%s\nwant:\n%s", seed, got, d.want)
		}
	}
}

// Whatever the split, a stream releases in total exactly String of the
// whole text, and never 8 bytes of a secret on the way.
func TestStreamEqualsWholeOnRandomSplits(t *testing.T) {
	r := mustNew(t, Options{})
	for _, d := range corpus(t) {
		t.Run(d.name, func(t *testing.T) {
			whole := r.String(d.text)
			if d.want != "" && whole != d.want {
				t.Fatalf("String:\n%s\nwant:\n%s", whole, d.want)
			}
			for seed := range uint64(12) {
				for _, maxLen := range []int{1, 2, 5, 17} {
					rng := rand.New(rand.NewPCG(seed, uint64(maxLen)))
					got := streamChecked(t, r, split(d.text, rng, maxLen), d.secrets)
					if got != whole {
						t.Fatalf("seed %d, fragments of up to %d bytes: streamed\n%s\nString\n%s", seed, maxLen, got, whole)
					}
				}
			}
		})
	}
}

// Ordinary prose is held back at most to the next space or newline; a word
// that may be a key (password) only until its value turns out missing.
func TestStreamReleasesProseAtWhitespace(t *testing.T) {
	r := mustNew(t, Options{})
	prose := "The api pod restarted 14 times since 09:12 because its liveness probe on :8080/healthz timed out.\n" +
		"Check the token-refresher logs, then the quota policy: it changed yesterday.\n"
	s := r.Stream()
	for i := 0; i < len(prose); i++ {
		s.Write(prose[i : i+1])
		if c := prose[i]; (c == ' ' || c == '\n') && s.held() != 0 {
			t.Fatalf("after %q, %d bytes are held back", prose[:i+1], s.held())
		}
	}
	if s.Text() != prose {
		t.Fatalf("released %q, want all the prose", s.Text())
	}

	s = r.Stream()
	s.Write("the password ")
	if s.Text() != "the " {
		t.Fatalf("released %q, want only %q while password may be a key", s.Text(), "the ")
	}
	s.Write("i")
	if s.Text() != "the password " {
		t.Fatalf("released %q once no value can follow", s.Text())
	}
}

// A candidate that spans lines is held until it is decided, and never
// beyond maxHold; a private key block is replaced as soon as it begins.
func TestStreamHoldsMultiLineCandidatesUntilDecided(t *testing.T) {
	r := mustNew(t, Options{})

	t.Run("data map until kind", func(t *testing.T) {
		s := r.Stream()
		s.Write("apiVersion: v1\ndata:\n  password: cGFzc3dvcmQxMjM0NQ==\n  user: YWRtaW4=\n")
		if s.Text() != "apiVersion: v1\n" {
			t.Fatalf("released %q before the kind is known", s.Text())
		}
		s.Write("kind: Secret\n")
		want := "apiVersion: v1\ndata:\n  password: [REDACTED:k8s_secret_data]\n  user: [REDACTED:k8s_secret_data]\n"
		if !strings.HasPrefix(s.Text(), want) {
			t.Fatalf("released %q, want it to start with %q", s.Text(), want)
		}
	})

	t.Run("private key replaced at BEGIN", func(t *testing.T) {
		s := r.Stream()
		s.Write("key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n")
		if s.Text() != "key:\n[REDACTED:private_key]" {
			t.Fatalf("released %q", s.Text())
		}
		for range 20 {
			s.Write("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n")
			if s.held() != 0 || s.Text() != "key:\n[REDACTED:private_key]" {
				t.Fatalf("inside the block: %d bytes held, released %q", s.held(), s.Text())
			}
		}
		s.Write("-----END OPENSSH PRIVATE KEY-----\ndone\n")
		if s.Text() != "key:\n[REDACTED:private_key]\ndone\n" {
			t.Fatalf("released %q", s.Text())
		}
	})

	t.Run("cap", func(t *testing.T) {
		s := r.Stream()
		s.Write("data:\n")
		line := "  k: " + strings.Repeat("QUJD", 20) + "\n"
		for range (maxHold / len(line)) + 50 {
			s.Write(line)
			if s.held() > maxHold {
				t.Fatalf("%d bytes held back, more than %d", s.held(), maxHold)
			}
		}
		if !strings.HasPrefix(s.Text(), "data:\n  k: [REDACTED:k8s_secret_data]\n") || strings.Contains(s.Text(), "QUJD") {
			t.Fatalf("a data map of unknown kind past the cap was not redacted: %.200q", s.Text())
		}
	})

	t.Run("flush decides", func(t *testing.T) {
		s := r.Stream()
		if got := s.Write("export DB_PASSWORD=hunter2hunter2"); got != "export " {
			t.Fatalf("Write released %q", got)
		}
		if got := s.Flush(); got != "DB_PASSWORD=[REDACTED:password_assignment]" {
			t.Fatalf("Flush released %q", got)
		}
		if got := s.Write("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"); got != "[REDACTED:private_key]" {
			t.Fatalf("after Flush, a new text: released %q", got)
		}
		s.Flush()
		if s.Text() != "export DB_PASSWORD=[REDACTED:password_assignment][REDACTED:private_key]" {
			t.Fatalf("Text() = %q", s.Text())
		}
	})
}
