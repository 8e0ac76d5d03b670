package redact

import "strings"

// Key/value detectors: password=…, secret: …, "api_key": "…", --password …,
// Authorization: Bearer …, aws_secret_access_key = …, and the credentials
// of a kubeconfig (client-key-data, token). The key stays visible; the value
// is redacted. The key arrives before its value, so a word that could be
// such a key is held until the value is complete or it turns out not to be.

// assignSuffixes end the (normalised: lower case, no _ - .) keys whose value
// is a secret: DB_PASSWORD, clientSecret, x-api-key, GITHUB_TOKEN, ...
var assignSuffixes = []string{
	"password", "passwd", "passphrase", "secret", "apikey", "secretkey",
	"privatekey", "signingkey", "encryptionkey", "masterkey", "token",
}

// classifyKey returns the kind of secret the value of key is, or "". toEOL
// says the value runs to the end of the line (a header value).
func classifyKey(key string, quoted bool) (kind string, toEOL bool) {
	if !keyEnd[key[len(key)-1]] {
		return "", false
	}
	var buf [48]byte
	n := len(buf)
	for i := len(key) - 1; i >= 0 && n > 0; i-- {
		c := key[i]
		if c == '_' || c == '-' || c == '.' {
			continue
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		n--
		buf[n] = c
	}
	norm := string(buf[n:])
	switch norm {
	case "clientkeydata", "clientcertificatedata":
		return kindKubeconfig, false
	case "authorization", "proxyauthorization":
		return kindAuthorization, true
	case "auth": // "auth": a registry's user:password in .dockerconfigjson
		if quoted { // unquoted, it is a commit subject's scope
			return kindAssignment, false
		}
	}
	if strings.HasPrefix(norm, "existing") { // existingSecret: the name of one
		return "", false
	}
	if strings.HasSuffix(norm, "secretaccesskey") || norm == "awssecretkey" {
		return kindAWSSecretKey, false
	}
	for _, s := range assignSuffixes {
		if strings.HasSuffix(norm, s) {
			return kindAssignment, false
		}
	}
	return "", false
}

// keyEnd holds the last letters of every key classifyKey knows.
var keyEnd = setOf("dDeEtTyYnNaAhH")

var (
	blank     = setOf(" \t")
	valueStop = setOf(" \t\r\n\f\v", "\"',;&}")
	lineStop  = setOf("\r\n\"'")
)

// assignAt matches key<sep>value at w[p] (a word start; prev is the byte
// before it; w is buf, perhaps shortened to the hold limit).
func (sc *scanner) assignAt(buf, w string, p int, fin bool, prev byte) cand {
	j := span(w, p, isKeyChar)
	if j == len(w) {
		return cand{st: ended(fin)}
	}
	quoted := prev == '"' || prev == '\''
	kind, toEOL := classifyKey(w[p:j], quoted)
	if kind == "" {
		return cand{}
	}
	k := j
	if quoted { // step over the key's closing quote: " ' or \"
		switch {
		case w[k] == prev:
			k++
		case w[k] == '\\':
			if k+1 == len(w) {
				return cand{st: ended(fin)}
			}
			if w[k+1] == '"' {
				k += 2
			}
		}
	}
	k = span(w, k, blank)
	if k == len(w) {
		return cand{st: ended(fin)}
	}
	spaced := false // --password value: the separator is the space
	switch {
	case w[k] == '=' || w[k] == ':':
		if k+1 == len(w) {
			return cand{st: ended(fin)}
		}
		if w[k+1] == w[k] { // == is a comparison, :: a scope
			return cand{}
		}
		if w[k] == ':' && kind == kindAssignment && !quoted && sc.inKubeconfigUser(buf, p) {
			kind = kindKubeconfig
		}
		k++
		if w[k-1] == ':' && w[k] == '=' {
			k++
		}
	case w[p] == '-' && k > j:
		spaced = true
	default:
		return cand{}
	}
	v := span(w, k, blank)
	if v == len(w) {
		return cand{st: ended(fin)}
	}
	var q string
	switch w[v] {
	case '"', '\'':
		q = w[v : v+1]
	case '\\':
		if v+1 == len(w) {
			return cand{st: ended(fin)}
		}
		if w[v+1] == '"' {
			q = `\"`
		}
	case '\n', '\r':
		return cand{}
	case '-':
		if spaced {
			return cand{} // the next flag, not a value
		}
	}
	s, e := v, -1
	if q != "" {
		s = v + len(q)
		e = closingQuote(w, s, q)
	} else {
		stop := valueStop
		if toEOL {
			stop = lineStop
		}
		e = s
		for e < len(w) && !stop[w[e]] {
			e++
		}
		if e == len(w) {
			e = -1
		}
	}
	if e < 0 {
		if !fin {
			return hold
		}
		e = len(w)
	}
	val := w[s:e]
	if notAValue(val) || placeholder(val) {
		return cand{}
	}
	out := w[p:s]
	if toEOL {
		if sch := authScheme(val); sch > 0 {
			out += val[:sch]
		}
	}
	return cand{st: found, end: e, out: out + marker(kind)}
}

// inKubeconfigUser reports whether the key at buf[p] starts a line of the
// user: mapping of a kubeconfig's users.
func (sc *scanner) inKubeconfigUser(buf string, p int) bool {
	col, first := sc.lineCol(buf, p)
	return first && sc.trk.parentAt(col) == "user"
}

// closingQuote returns the index of the quote q closing a value that
// starts at s, or of the end of its line (an unterminated value is redacted
// to there), or -1 if w ends first.
func closingQuote(w string, s int, q string) int {
	for i := s; i < len(w); i++ {
		switch c := w[i]; {
		case c == '\n' || c == '\r':
			return i
		case q == `"` && c == '\\':
			i++
		case q == `\"` && c == '\\':
			if i+1 < len(w) && w[i+1] == '"' {
				return i
			}
			if i+1 == len(w) {
				return -1
			}
		case q == "'" && c == '\'', q == `"` && c == '"':
			return i
		}
	}
	return -1
}

// notAValue reports values that are no secret: empty, booleans and nulls,
// references to a secret kept elsewhere (${VAR}, <set to the key 'password'
// in secret 'db'>), structure that follows on later lines, and what was
// already redacted.
func notAValue(v string) bool {
	if v == "" || strings.IndexByte("{[|><", v[0]) >= 0 {
		return true
	}
	switch strings.ToLower(v) {
	case "true", "false", "null", "nil", "none", "yes", "no", "<none>":
		return true
	}
	return strings.HasPrefix(v, "${") || strings.HasPrefix(v, "$(") || strings.HasPrefix(v, "{{") ||
		strings.Trim(v, "*") == ""
}

// authScheme returns the length of a leading "Bearer " (scheme and spaces)
// of a header value, or 0.
func authScheme(v string) int {
	i := 0
	for i < len(v) && (isAlnum[v[i]] || v[i] == '-') {
		i++
	}
	j := span(v, i, blank)
	if i == 0 || j == i || j == len(v) {
		return 0
	}
	return j
}

// placeholderWords are values that stand for a secret in documentation,
// compared lower case without - _ . and spaces; a value starting with
// one of placeholderPrefixes and made of letters is one too
// ("example-password", not "changeme2024!").
var (
	placeholderWords    = []string{"changeme", "replaceme", "example", "placeholder", "password", "secret", "token", "redacted", "todo", "tbd", "none", "empty", "dummy"}
	placeholderPrefixes = []string{"example", "changeme", "replaceme", "placeholder"}
)

// placeholder reports values that stand for a secret rather than being
// one (docs/design.md §17): "...", "…", "***", "xxxx", "<name>", "${VAR}", "$VAR",
// "$(cmd)", REPLACE_ME, changeme, example, and the name of a key that
// holds the secret elsewhere ("secretKey: password" in an
// ExternalSecret, "key: db-password"). Quotes and backquotes around the
// value (Markdown code) do not count. A runbook about rotating secrets
// shows these; none of them is a secret, and every real value still is.
func placeholder(v string) bool {
	t := strings.Trim(v, "`\"',;:.()") // Markdown code and sentence punctuation around it
	if t == "" || strings.Trim(t, ".…*") == "" || notAValue(t) {
		return true
	}
	l := strings.ToLower(t)
	if strings.Count(l, "x") >= 3 && strings.Trim(l, "x-_.…") == "" {
		return true
	}
	if l[0] == '$' && len(l) > 1 && span(l, 1, isKeyChar) == len(l) {
		return true // $VAR: a reference to the environment
	}
	var b strings.Builder
	letters := true
	for i := 0; i < len(l); i++ {
		switch c := l[i]; {
		case c == '-' || c == '_' || c == '.' || c == ' ':
		case c >= 'a' && c <= 'z':
			b.WriteByte(c)
		default:
			letters = false
			b.WriteByte(c)
		}
	}
	n := b.String()
	for _, w := range placeholderWords {
		if n == w {
			return true
		}
	}
	for _, p := range placeholderPrefixes {
		if letters && strings.HasPrefix(n, p) {
			return true
		}
	}
	// The name of a key, such as db-password or API_TOKEN: letters and
	// separators only, ending like a secret's key.
	if letters && len(t) <= 48 && isKeyName(t) {
		kind, _ := classifyKey(t, false)
		return kind != ""
	}
	return false
}

// isKeyName reports whether s is made of letters and - _ . only, as a
// key's name is.
func isKeyName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
