package redact

import (
	"bytes"
	"strings"
)

// tracker follows the indentation structure of the consumed text (YAML, and
// pretty-printed JSON, which indents the same way) to remember the kind: of
// the object being printed, so that a data: map that comes after kind:
// (hand-written manifests) is known to be a Secret's at once. kubectl prints
// kind after data; that order is handled by looking ahead (k8s_yaml.go).
//
// It also remembers the keys that open a nested mapping (parents), so that
// the password: or token: of a kubeconfig's user: is labelled kubeconfig.
type tracker struct {
	head    []byte // the first headMax bytes of the current line
	col     int    // bytes of the current line consumed
	space   bool   // whether they were all spaces
	kinds   []kindAt
	parents []kindAt // kind holds the key
}

type kindAt struct {
	indent int
	kind   string
}

const headMax = 160

func (t *tracker) feed(s string) {
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		seg := s
		if i >= 0 {
			seg = s[:i]
		}
		if room := headMax - len(t.head); room > 0 {
			t.head = append(t.head, seg[:min(room, len(seg))]...)
		}
		if t.space {
			t.space = allSpaces(seg)
		}
		t.col += len(seg)
		if i < 0 {
			return
		}
		t.endLine()
		t.head, t.col, t.space = t.head[:0], 0, true
		s = s[i+1:]
	}
}

func (t *tracker) endLine() {
	line := bytes.TrimRight(t.head, " \t\r")
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	rest := line[n:]
	if len(rest) == 0 || rest[0] == '#' {
		return
	}
	if n == 0 && (bytes.HasPrefix(rest, []byte("---")) || bytes.HasPrefix(rest, []byte("..."))) {
		t.kinds, t.parents = t.kinds[:0], t.parents[:0] // a new YAML document
		return
	}
	t.kinds = dropFrom(t.kinds, n+1) // deeper mappings ended
	t.parents = dropFrom(t.parents, n)
	c := n
	for bytes.HasPrefix(rest, []byte("- ")) {
		rest = rest[2:]
		c += 2
		for len(rest) > 0 && rest[0] == ' ' {
			rest, c = rest[1:], c+1
		}
	}
	key, val := keyValue(rest)
	switch string(key) {
	case "apiVersion":
		t.kinds = dropFrom(t.kinds, c) // a new object starts at this indentation
	case "kind":
		t.kinds = append(dropFrom(t.kinds, c), kindAt{indent: c, kind: string(val)})
	}
	if key != nil && len(val) == 0 {
		t.parents = append(dropFrom(t.parents, c), kindAt{indent: c, kind: string(key)})
	}
}

// dropFrom forgets the entries at column from and deeper.
func dropFrom(es []kindAt, from int) []kindAt {
	k := es[:0]
	for _, e := range es {
		if e.indent < from {
			k = append(k, e)
		}
	}
	return k
}

// parentAt returns the key whose mapping a line indented by c is in.
func (t *tracker) parentAt(c int) string {
	for i := len(t.parents) - 1; i >= 0; i-- {
		if t.parents[i].indent < c {
			return t.parents[i].kind
		}
	}
	return ""
}

// kindAt returns the kind remembered for the mapping at column c, or "".
func (t *tracker) kindAt(c int) string {
	for _, e := range t.kinds {
		if e.indent == c {
			return e.kind
		}
	}
	return ""
}

// keyValue splits `key: value` or `"key": "value",` (quotes and a trailing
// comma dropped). key is nil if the line is not of that form.
func keyValue(s []byte) (key, val []byte) {
	if len(s) > 0 && s[0] == '"' {
		i := bytes.IndexByte(s[1:], '"')
		if i < 0 {
			return nil, nil
		}
		key, s = s[1:1+i], s[2+i:]
		if len(s) == 0 || s[0] != ':' {
			return nil, nil
		}
		s = s[1:]
	} else {
		i := bytes.IndexByte(s, ':')
		if i <= 0 || (i+1 < len(s) && s[i+1] != ' ') {
			return nil, nil
		}
		key, s = s[:i], s[i+1:]
	}
	val = bytes.TrimSpace(s)
	val = bytes.TrimSuffix(val, []byte(","))
	val = bytes.Trim(val, `"'`)
	return key, val
}
