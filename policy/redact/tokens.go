package redact

import "strings"

// Tokens with a recognisable shape: a fixed prefix and a run of token
// characters (AWS access key ids, GitHub, Slack and OpenAI-style tokens),
// and JWTs. They are looked for at the start of a word only, so that a long
// base64 text does not produce one by chance.

type shape struct {
	prefix   string
	body     *byteSet
	min, max int      // bounds of the body's length; max 0 is unbounded
	notAfter *byteSet // bytes that may not follow the body
	kind     string
	keep     bool // keep the prefix visible (it is not secret)
}

var (
	upperDigit = setOf("A-Z", "0-9")
	alnumUnder = setOf("a-z", "A-Z", "0-9", "_")
	alnumDash  = setOf("a-z", "A-Z", "0-9", "-")
	b64url     = setOf("a-z", "A-Z", "0-9", "_-")
	dashUnder  = setOf("_-")
	hookPath   = setOf("a-z", "A-Z", "0-9", "/")
)

var shapesByFirst = func() (t [256][]shape) {
	add := func(s shape) { t[s.prefix[0]] = append(t[s.prefix[0]], s) }
	for _, p := range []string{"AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "APKA", "AROA", "ASCA"} {
		add(shape{prefix: p, body: upperDigit, min: 16, max: 16, notAfter: isAlnum, kind: kindAWSAccessKey})
	}
	for _, p := range []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"} {
		add(shape{prefix: p, body: isAlnum, min: 36, kind: kindGitHub})
	}
	add(shape{prefix: "github_pat_", body: alnumUnder, min: 22, kind: kindGitHub})
	for _, p := range []string{"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxo-", "xoxe-", "xapp-"} {
		add(shape{prefix: p, body: alnumDash, min: 10, kind: kindSlack})
	}
	add(shape{prefix: "hooks.slack.com/services/", body: hookPath, min: 20, kind: kindSlack, keep: true})
	for _, p := range []string{"sk-proj-", "sk-svcacct-", "sk-admin-", "sk-ant-"} {
		add(shape{prefix: p, body: b64url, min: 20, kind: kindOpenAI})
	}
	// The legacy form has no dashes after sk-: "sk-" followed by a dashed
	// name is a resource name, not a key.
	add(shape{prefix: "sk-", body: isAlnum, min: 32, notAfter: dashUnder, kind: kindOpenAI})
	return t
}()

var jwtMarker = marker(kindJWT)

// tokenAt reports a shaped token starting at w[p] (a word start).
func tokenAt(w string, p int, fin bool) cand {
	if w[p] == 'e' {
		return jwtAt(w, p, fin)
	}
	var res cand
	for i := range shapesByFirst[w[p]] {
		c := shapesByFirst[w[p]][i].match(w, p, fin)
		if c.st == partial {
			return hold
		}
		if c.st == found && res.st == none {
			res = c
		}
	}
	return res
}

func (s *shape) match(w string, p int, fin bool) cand {
	i, st := lit(w, p, s.prefix, fin)
	if st != found {
		return cand{st: st}
	}
	j := i
	for j < len(w) && s.body[w[j]] && (s.max == 0 || j-i < s.max) {
		j++
	}
	if j == len(w) && !fin {
		return hold // the body, or what follows it, is still arriving
	}
	if j-i < s.min || (j < len(w) && s.notAfter != nil && s.notAfter[w[j]]) {
		return cand{}
	}
	if strings.Trim(w[i:j], "Xx") == "" {
		return cand{} // AKIAXXXXXXXXXXXXXXXX: a placeholder (docs/design.md §17)
	}
	out := marker(s.kind)
	if s.keep {
		out = s.prefix + out
	}
	return cand{st: found, end: j, out: out}
}

// jwtAt matches header.payload.signature where the header is base64url
// JSON ("eyJ" is `{"`).
func jwtAt(w string, p int, fin bool) cand {
	i, st := lit(w, p, "eyJ", fin)
	if st != found {
		return cand{st: st}
	}
	j := span(w, i, b64url)
	if j == len(w) {
		return cand{st: ended(fin)}
	}
	if j-p < 10 || w[j] != '.' {
		return cand{}
	}
	k := span(w, j+1, b64url)
	if k == len(w) {
		return cand{st: ended(fin)}
	}
	if k-j-1 < 10 || w[k] != '.' {
		return cand{}
	}
	e := span(w, k+1, b64url)
	if e == len(w) && !fin {
		return hold
	}
	return cand{st: found, end: e, out: jwtMarker}
}
