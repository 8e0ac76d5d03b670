package redact

import "strings"

// A URL's authority ends at one of these (a password must escape them).
var authorityEnd = setOf(" \t\r\n\f\v", "/?#\"'<>`\\{}|^")

// urlAt matches scheme://user:password@host at w[p] and redacts only the
// password. The password runs to the last @ of the authority, as URL
// parsers read it, so an unescaped @ in it does not leak its tail.
func urlAt(w string, p int, fin bool) cand {
	j := span(w, p, isSchemeChar)
	if j == len(w) {
		return cand{st: ended(fin)}
	}
	a, st := lit(w, j, "://", fin)
	if st != found {
		return cand{st: st}
	}
	k, at := a, -1
	for k < len(w) && !authorityEnd[w[k]] {
		if w[k] == '@' {
			at = k
		}
		k++
	}
	if k == len(w) && !fin {
		return hold
	}
	if at < 0 {
		return cand{}
	}
	colon := strings.IndexByte(w[a:at], ':')
	if colon < 0 || a+colon+1 == at {
		return cand{}
	}
	return cand{st: found, end: at, out: w[p:a+colon+1] + marker(kindURLPassword)}
}
