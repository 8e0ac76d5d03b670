package redact

import (
	"fmt"
	"strings"
)

// The kinds a redaction is labelled with, as in [REDACTED:<kind>].
const (
	kindAWSAccessKey  = "aws_access_key"
	kindAWSSecretKey  = "aws_secret_key"
	kindPrivateKey    = "private_key"
	kindJWT           = "jwt"
	kindSlack         = "slack_token"
	kindGitHub        = "github_token"
	kindOpenAI        = "openai_key"
	kindAuthorization = "authorization"
	kindURLPassword   = "url_password"
	kindKubeconfig    = "kubeconfig"
	kindAssignment    = "password_assignment"
	kindSecretData    = "k8s_secret_data"
	kindPattern       = "pattern"
	kindConfigured    = "configured"
)

// marker is what replaces a secret of the given kind.
func marker(kind string) string { return "[REDACTED:" + kind + "]" }

// maxHold bounds how much text a Stream holds back while it cannot yet tell
// whether the text is (part of) a secret. A candidate that is still open
// after this many bytes is decided conservatively: it is treated as a secret.
const maxHold = 64 << 10

// minSecretLen is the shortest configured secret that is matched: shorter
// strings would redact ordinary words.
const minSecretLen = 8

// maxSecretLen is the longest configured secret accepted: a literal longer
// than what a Stream may hold back could not be matched across fragments.
const maxSecretLen = 16 << 10

// Options configures a Redactor.
type Options struct {
	// Patterns are extra detectors (config redact.patterns), Go regular
	// expressions; whatever one matches is replaced by [REDACTED:pattern].
	Patterns []string
	// Secrets are the values opsgate itself was configured with (tokens,
	// keys, passwords); each is matched literally, and in its base64 and
	// URL-escaped forms, and replaced by [REDACTED:configured]. Secrets
	// shorter than 8 bytes are ignored.
	Secrets []string
}

// Redactor finds secrets in text and replaces them with [REDACTED:<kind>].
// It is immutable and safe for concurrent use. A nil *Redactor redacts with
// the built-in detectors only, so a component that was never handed one
// still does not leak.
type Redactor struct {
	literals *literalSet // nil without configured secrets
	patterns []pattern
}

// New returns a Redactor with the built-in detectors plus o's patterns and
// secrets. A pattern that does not compile, or that matches the empty
// string, is an error; so is a secret longer than 16 KiB.
func New(o Options) (*Redactor, error) {
	r := &Redactor{}
	for i, p := range o.Patterns {
		pt, err := compilePattern(p)
		if err != nil {
			return nil, fmt.Errorf("redact: pattern %d %q: %w", i+1, p, err)
		}
		r.patterns = append(r.patterns, pt)
	}
	lits, err := literalsOf(o.Secrets)
	if err != nil {
		return nil, err
	}
	r.literals = lits
	return r, nil
}

var builtinOnly = &Redactor{}

func (r *Redactor) orBuiltin() *Redactor {
	if r == nil {
		return builtinOnly
	}
	return r
}

// String returns s with every secret replaced by [REDACTED:<kind>]. It is
// exactly what a Stream fed s in any fragments releases in total.
func (r *Redactor) String(s string) string {
	sc := newScanner(r.orBuiltin())
	var b strings.Builder
	b.Grow(len(s))
	if rest := sc.run(s, true, &b); rest != "" {
		b.WriteString(marker("undecided")) // unreachable: with final every step decides
	}
	return b.String()
}

// Stream returns a new Stream for one growing text (a streamed reply, a
// terminal session, a log file being tailed).
func (r *Redactor) Stream() *Stream {
	return &Stream{r: r.orBuiltin(), sc: newScanner(r.orBuiltin())}
}
