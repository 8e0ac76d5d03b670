package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxPropertyDescription bounds a property description in the schema the
// model sees, in characters. Every offered tool's schema goes with every
// model call, and servers write property descriptions as paragraphs (the
// selector syntax, every supported field, caveats): the first sentence,
// cut to this, names what to pass; the rest costs tokens on each step for
// details the model rarely needs. Validation still uses the full schema.
const maxPropertyDescription = 64

// compactSchema returns the input schema as the model sees it: every
// constraint kept (type, enum, const, required, bounds, pattern, format,
// default, examples, items, nesting, $ref and $defs) and only text the model
// does not need dropped or shortened: "$schema" and "$comment", titles that
// repeat the property name or sit beside a description, an empty
// "required", and descriptions cut to their first sentence and at most
// maxPropertyDescription characters, whitespace collapsed. name is the
// tool's, which a root title may repeat. Key order is kept. A schema that
// cannot be read is returned as it is.
func compactSchema(full json.RawMessage, name string) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(full))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	if err != nil {
		return full
	}
	if _, err := dec.Token(); err == nil {
		return full // trailing data: not one JSON value
	}
	root, ok := v.(object)
	if !ok {
		return full
	}
	var buf bytes.Buffer
	if err := encodeOrdered(&buf, compactNode(root, name)); err != nil {
		return full
	}
	return buf.Bytes()
}

// Where a schema keeps its subschemas: maps of name to schema, single
// schemas, and lists of schemas ("items" is a schema or, before draft
// 2020-12, a list).
var (
	schemaMaps  = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}
	schemaLists = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true, "items": true}
	schemaOne   = map[string]bool{"additionalProperties": true, "additionalItems": true, "items": true, "contains": true,
		"propertyNames": true, "not": true, "if": true, "then": true, "else": true,
		"unevaluatedProperties": true, "unevaluatedItems": true}
)

// compactNode compacts one schema object; name is the property (or, at the
// root, the tool) it describes, if any.
func compactNode(s object, name string) object {
	desc := ""
	if d, ok := s.get("description").(string); ok {
		desc = compactText(d, maxPropertyDescription)
	}
	out := make(object, 0, len(s))
	for _, m := range s {
		switch m.key {
		case "$schema", "$comment":
			continue
		case "description":
			if desc == "" {
				continue
			}
			m.val = desc
		case "title":
			t, ok := m.val.(string)
			if !ok {
				break
			}
			if desc != "" || sameName(t, name) {
				continue
			}
			m.val = compactText(t, maxPropertyDescription)
		case "required":
			if a, ok := m.val.([]any); ok && len(a) == 0 {
				continue
			}
		}
		m.val = compactChildren(m.key, m.val)
		out = append(out, m)
	}
	return out
}

// compactChildren compacts the subschemas under key; other values are
// constraints or data (an enum, a default, an example) and stay as they are.
func compactChildren(key string, v any) any {
	switch c := v.(type) {
	case object:
		switch {
		case schemaMaps[key]:
			out := make(object, len(c))
			for i, m := range c {
				out[i] = member{m.key, compactChild(m.val, m.key)}
			}
			return out
		case schemaOne[key]:
			return compactNode(c, "")
		}
	case []any:
		if schemaLists[key] {
			out := make([]any, len(c))
			for i, e := range c {
				out[i] = compactChild(e, "")
			}
			return out
		}
	}
	return v
}

func compactChild(v any, name string) any {
	if o, ok := v.(object); ok {
		return compactNode(o, name)
	}
	return v // true or false schemas
}

// sameName reports whether a title only repeats a name ("Label selector"
// for label_selector).
func sameName(title, name string) bool {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return unicode.ToLower(r)
			}
			return -1
		}, s)
	}
	return name != "" && norm(title) == norm(name)
}

// compactText collapses whitespace, keeps the first sentence, and cuts
// what is still longer than limit characters at a word boundary with "…".
func compactText(s string, limit int) string {
	s = firstSentence(strings.Join(strings.Fields(s), " "))
	return cutWords(s, limit)
}

// abbreviations end with a period that does not end a sentence.
var abbreviations = map[string]bool{"e.g.": true, "i.e.": true, "etc.": true, "vs.": true, "cf.": true, "approx.": true, "incl.": true, "no.": true}

// firstSentence returns s up to its first sentence end (see sentenceEnds):
// "Name (e.g. 'web'). Default: all" gives "Name (e.g. 'web')."
func firstSentence(s string) string {
	for end := range sentenceEnds(s) {
		return s[:end]
	}
	return s
}

// sentenceEnds yields the byte offsets just past each sentence end of s: a
// '.', '!' or '?' followed by a space and a capital letter or digit,
// outside brackets and double quotes, and not the period of an
// abbreviation.
func sentenceEnds(s string) func(yield func(int) bool) {
	return func(yield func(int) bool) {
		depth, quoted := 0, false
		for i, r := range s {
			switch r {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth = max(0, depth-1)
			case '"', '`':
				quoted = !quoted
			case '.', '!', '?':
				if depth > 0 || quoted || i+2 >= len(s) || (s[i+1] != ' ' && s[i+1] != '\n') {
					continue
				}
				next, _ := utf8.DecodeRuneInString(s[i+2:])
				if !unicode.IsUpper(next) && !unicode.IsDigit(next) {
					continue
				}
				word := s[strings.LastIndexAny(s[:i], " \n")+1 : i+1]
				if abbreviations[strings.ToLower(word)] {
					continue
				}
				if !yield(i + 1) {
					return
				}
			}
		}
	}
}

// cutWords cuts s to at most limit characters at the last word boundary
// and marks the cut with "…". An aside the cut leaves open is closed after
// the mark when enough of it stays, and dropped whole otherwise, so the
// text never ends in "(e.g.…". A single word longer than limit is cut
// inside.
func cutWords(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	cut, open := wordCut(r, limit-1) // room for "…"
	if open >= 0 && utf8.RuneCountInString(cut[open:]) >= minAside {
		// Room for the closing bracket too.
		if cut, open = wordCut(r, limit-2); open >= 0 && utf8.RuneCountInString(cut[open:]) >= minAside {
			closing := ")"
			if cut[open] == '[' {
				closing = "]"
			}
			return strings.TrimRight(cut, " ,;:-–([") + "…" + closing
		}
	}
	if open >= 0 {
		cut = cut[:open]
	}
	return strings.TrimRight(cut, " ,;:-–([") + "…"
}

// wordCut cuts r to n runes at the last space, and returns where an aside
// the cut leaves open starts, or -1.
func wordCut(r []rune, n int) (cut string, open int) {
	cut = string(r[:n])
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		cut = cut[:i]
	}
	open = strings.LastIndexAny(cut, "([")
	if open <= strings.LastIndexAny(cut, ")]") {
		open = -1
	}
	return cut, open
}

// minAside is the least of an aside, in characters, that is worth keeping
// when a cut runs through it.
const minAside = 16

// The schema is decoded keeping the order of keys, so the model sees the
// properties in the order the server listed them.

type member struct {
	key string
	val any
}

// object is a JSON object in source order.
type object []member

func (o object) get(key string) any {
	for _, m := range o {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

var errNotJSON = errors.New("tools: not a JSON value")

// decodeOrdered reads one JSON value; objects become object, numbers
// json.Number.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		o := object{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, ok := k.(string)
			if !ok {
				return nil, errNotJSON
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			o = append(o, member{key, v})
		}
		_, err := dec.Token()
		return o, err
	case '[':
		a := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token()
		return a, err
	}
	return nil, errNotJSON
}

// encodeOrdered writes v as compact JSON without HTML escaping: the schema
// goes to a model, not into a web page, and "\u003c" costs more tokens
// than "<".
func encodeOrdered(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case object:
		buf.WriteByte('{')
		for i, m := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encodeOrdered(buf, m.key); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := encodeOrdered(buf, m.val); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encodeOrdered(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case json.Number:
		buf.WriteString(x.String())
	default: // string, bool, nil
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(x); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
	}
	return nil
}
