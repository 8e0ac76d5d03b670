package redact

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// literalSet holds every form of every secret opsgate was configured with,
// and finds the leftmost in one pass over the text, whatever their number.
type literalSet struct {
	lits    []string // longest first
	maxLen  int
	pair    [1 << 16 / 64]uint64 // the first two bytes of some literal
	byPair  map[uint16][]int
	byFirst [256][]int
}

// literalsOf returns the forms to look for, nil if none. Of two forms
// starting at the same place, the longer one is redacted, whole.
func literalsOf(secrets []string) (*literalSet, error) {
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
	if len(forms) == 0 {
		return nil, nil
	}
	sort.SliceStable(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	ls := &literalSet{lits: forms, maxLen: len(forms[0]), byPair: map[uint16][]int{}}
	for i, f := range forms {
		k := uint16(f[0])<<8 | uint16(f[1])
		ls.pair[k/64] |= 1 << (k % 64)
		ls.byPair[k] = append(ls.byPair[k], i)
		ls.byFirst[f[0]] = append(ls.byFirst[f[0]], i)
	}
	return ls, nil
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

// find returns the leftmost occurrence of a literal in buf, or, when more
// text may follow, the leftmost tail of buf that could still become one.
func (ls *literalSet) find(buf string, final bool) (start, end int, st status) {
	ms, me := -1, -1
	for i := 0; i+1 < len(buf) && ms < 0; i++ {
		k := uint16(buf[i])<<8 | uint16(buf[i+1])
		if ls.pair[k/64]&(1<<(k%64)) == 0 {
			continue
		}
		for _, j := range ls.byPair[k] {
			if strings.HasPrefix(buf[i:], ls.lits[j]) {
				ms, me = i, i+len(ls.lits[j])
				break
			}
		}
	}
	if !final {
		for k := max(0, len(buf)-ls.maxLen+1); k < len(buf) && (ms < 0 || k < ms); k++ {
			for _, j := range ls.byFirst[buf[k]] {
				if l := ls.lits[j]; len(buf)-k < len(l) && strings.HasPrefix(l, buf[k:]) {
					return k, k, partial
				}
			}
		}
	}
	if ms < 0 {
		return 0, 0, none
	}
	return ms, me, found
}
