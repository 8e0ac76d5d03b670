package policy

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// pattern matches one value: a glob, or with the "re:" prefix a regular
// expression (Go syntax, unanchored: write ^…$ to match the whole value).
type pattern struct {
	glob *glob
	re   *regexp.Regexp
}

func compilePattern(s string) (pattern, error) {
	if expr, ok := strings.CutPrefix(s, "re:"); ok {
		re, err := regexp.Compile(expr)
		return pattern{re: re}, err
	}
	g, err := compileGlob(s)
	return pattern{glob: g}, err
}

func (p pattern) match(s string) bool {
	if p.re != nil {
		return p.re.MatchString(s)
	}
	return p.glob.match(s)
}

// argMatch is one entry of match.args: a path into the arguments and the
// pattern a value there must match.
//
// The path is a top-level key or keys joined by dots ("metadata.name"). A
// key that itself contains dots is found too: at each level the longest
// run of path segments that names a key is tried first. Scalars are
// matched as text (numbers as written, true/false, null); an array
// matches when any element does, at any level; an object never matches.
type argMatch struct {
	key  string
	segs []string
	// joined[i][j] is segs[i:j] joined by dots, precomputed.
	joined [][]string
	pat    pattern
}

func newArgMatch(path string, pat pattern) argMatch {
	segs := strings.Split(path, ".")
	joined := make([][]string, len(segs))
	for i := range segs {
		joined[i] = make([]string, len(segs)+1)
		for j := i + 1; j <= len(segs); j++ {
			joined[i][j] = strings.Join(segs[i:j], ".")
		}
	}
	return argMatch{key: path, segs: segs, joined: joined, pat: pat}
}

// match reports whether the value at m's path in doc matches. A string
// is tried in each of its spellings (spellings; nil: as written only).
func (m *argMatch) match(doc any, spellings func(string) []string) bool {
	return m.at(doc, 0, spellings)
}

func (m *argMatch) at(v any, i int, spellings func(string) []string) bool {
	if arr, ok := v.([]any); ok {
		for _, e := range arr {
			if m.at(e, i, spellings) {
				return true
			}
		}
		return false
	}
	if i == len(m.segs) {
		s, ok := scalarText(v)
		if !ok {
			return false
		}
		if _, isString := v.(string); !isString || spellings == nil {
			return m.pat.match(s)
		}
		for _, f := range spellings(s) {
			if m.pat.match(f) {
				return true
			}
		}
		return false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for j := len(m.segs); j > i; j-- {
		if child, ok := obj[m.joined[i][j]]; ok && m.at(child, j, spellings) {
			return true
		}
	}
	return false
}

func scalarText(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		if v {
			return "true", true
		}
		return "false", true
	case nil:
		return "null", true
	}
	return "", false
}

// parseArgs decodes the arguments for matching; numbers keep their text.
func parseArgs(raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}
