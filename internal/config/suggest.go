package config

import (
	"reflect"
	"strings"
)

// suggest returns " (did you mean X?)" for an unknown key found in a
// mapping of type t at path, or "". It tries, in order: a key of the same
// mapping spelt differently (baseURL, base-url, bse_url), then the same key
// in another section (model at the top level means llm.model).
func suggest(t reflect.Type, path, key string) string {
	if k := closest(keysOf(t), key); k != "" {
		return " (did you mean " + join(path, k) + "?)"
	}
	for _, p := range allPaths(reflect.TypeFor[Config](), "") {
		leaf := p[strings.LastIndexByte(p, '.')+1:]
		if normalize(leaf) == normalize(key) {
			return " (did you mean " + p + "?)"
		}
	}
	return ""
}

func keysOf(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		if k := tagName(t.Field(i)); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// allPaths lists every key path of t, lists of structs written as name[].
func allPaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		k := tagName(f)
		if k == "" {
			continue
		}
		p := join(prefix, k)
		out = append(out, p)
		ft := f.Type
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
			out = append(out, allPaths(ft.Elem(), p+"[]")...)
		} else if ft.Kind() == reflect.Struct && ft != durationType {
			out = append(out, allPaths(ft, p)...)
		}
	}
	return out
}

// closest returns the candidate nearest to key, or "" when none is close.
func closest(candidates []string, key string) string {
	best, bestDist := "", 1<<30
	nk := normalize(key)
	for _, c := range candidates {
		if normalize(c) == nk {
			return c
		}
		d := distance(nk, normalize(c))
		limit := 2
		if len(nk) <= 4 {
			limit = 1
		}
		if d <= limit && d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

func normalize(s string) string {
	s = strings.ToLower(s)
	return strings.NewReplacer("_", "", "-", "", " ", "").Replace(s)
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
