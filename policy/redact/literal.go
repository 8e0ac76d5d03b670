package redact

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// A literal is one form of a secret opsgate was configured with.
type literal struct{ s string }

// literalsOf returns the forms to look for, longest first, so that of two
// forms starting at the same place the longer one is redacted whole.
func literalsOf(secrets []string) ([]literal, error) {
	seen := map[string]bool{}
	var forms []string
	for i, s := range secrets {
		if len(s) < minSecretLen {
			continue
		}
		if len(s) > maxSecretLen {
			return nil, fmt.Errorf("redact: secret %d is %d bytes, more than %d", i+1, len(s), maxSecretLen)
		}
		for _, f := range formsOf(s) {
			if len(f) >= minSecretLen && !seen[f] {
				seen[f] = true
				forms = append(forms, f)
			}
		}
	}
	sort.SliceStable(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	lits := make([]literal, len(forms))
	for i, f := range forms {
		lits[i] = literal{s: f}
	}
	return lits, nil
}

// formsOf returns s as it may appear in output: itself, URL-escaped, and
// base64-encoded. A secret inside a longer base64 text (a basic-auth header,
// a Kubernetes Secret holding a whole config file) is encoded at one of
// three alignments; for each, the characters that depend only on the secret
// are a fixed string, so those three cores are matched too.
func formsOf(s string) []string {
	forms := []string{s, url.QueryEscape(s), url.PathEscape(s)}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(s)))
		raw := enc.WithPadding(base64.NoPadding)
		for k := 0; k < 3; k++ {
			e := raw.EncodeToString(append(make([]byte, k), s...))
			lo := (8*k + 5) / 6          // characters that carry bits of the k bytes before
			hi := (8 * (k + len(s))) / 6 // the last character may carry bits of the byte after
			forms = append(forms, e[lo:hi])
		}
	}
	return forms
}

// find returns the leftmost occurrence of l in buf, or, when more text may
// follow, the leftmost tail of buf that could still become one.
func (l literal) find(buf string, final bool) (start, end int, st status) {
	i := strings.Index(buf, l.s)
	if !final {
		if k := partialTail(buf, l.s); k >= 0 && (i < 0 || k < i) {
			return k, k, partial
		}
	}
	if i < 0 {
		return 0, 0, none
	}
	return i, i + len(l.s), found
}

// partialTail returns the leftmost k such that buf[k:] is a non-empty
// proper prefix of s, or -1.
func partialTail(buf, s string) int {
	k := len(buf) - len(s) + 1
	if k < 0 {
		k = 0
	}
	for k < len(buf) {
		j := strings.IndexByte(buf[k:], s[0])
		if j < 0 {
			return -1
		}
		k += j
		if strings.HasPrefix(s, buf[k:]) {
			return k
		}
		k++
	}
	return -1
}
