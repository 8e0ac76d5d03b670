package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// reader walks yaml.v3 nodes (not structs) so that every error can name
// the file, the line and the key, and no unknown key passes silently.
type reader struct{ file string }

func (r reader) errf(n *yaml.Node, key, format string, args ...any) *Error {
	e := &Error{File: r.file, Key: key, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line = n.Line
	}
	if e.Key == "" {
		e.Key = "(top level)"
	}
	return e
}

func join(key, name string) string {
	if key == "" {
		return name
	}
	return key + "." + name
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.Tag {
	case "!!int", "!!float":
		return "the number " + n.Value
	case "!!bool":
		return n.Value
	case "!!null":
		return "nothing"
	}
	return strconv.Quote(n.Value)
}

// pairs calls each for every key of a mapping, refusing keys set twice.
func (r reader) pairs(n *yaml.Node, key string, each func(k, v *yaml.Node, key string) error) error {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return r.errf(n, key, "must be a mapping (got %s)", kindName(n))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return r.errf(k, key, "keys must be names (got %s)", kindName(k))
		}
		if line, ok := seen[k.Value]; ok {
			return r.errf(k, join(key, k.Value), "set twice (first on line %d)", line)
		}
		seen[k.Value] = k.Line
		if err := each(k, v, join(key, k.Value)); err != nil {
			return err
		}
	}
	return nil
}

// fields is pairs over a fixed set of keys; a key given with no value
// (null) counts as absent.
func (r reader) fields(n *yaml.Node, key string, known []string, each func(name string, v *yaml.Node, key string) error) error {
	return r.pairs(n, key, func(k, v *yaml.Node, sub string) error {
		if !slices.Contains(known, k.Value) {
			return r.errf(k, sub, "unknown key (known: %s)", strings.Join(known, ", "))
		}
		if isNull(v) {
			return nil
		}
		return each(k.Value, v, sub)
	})
}

// str reads a scalar as text; numbers are taken as written (ids such as
// telegram: 12345678 need no quotes).
func (r reader) str(n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", r.errf(n, key, "must be text (got %s)", kindName(n))
	}
	if n.Tag == "!!bool" {
		return "", r.errf(n, key, "must be text (got %s; quote it)", n.Value)
	}
	return n.Value, nil
}

// name reads a non-empty text.
func (r reader) name(n *yaml.Node, key string) (string, error) {
	s, err := r.str(n, key)
	if err == nil && strings.TrimSpace(s) == "" {
		err = r.errf(n, key, "must not be empty")
	}
	return s, err
}

func (r reader) list(n *yaml.Node, key string) ([]*yaml.Node, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, r.errf(n, key, "must be a list (got %s)", kindName(n))
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, item := range n.Content {
		out[i] = resolve(item)
	}
	return out, nil
}

func (r reader) boolean(n *yaml.Node, key string) (bool, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return false, r.errf(n, key, "must be true or false (got %s)", kindName(n))
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		return false, r.errf(n, key, "must be true or false: %v", err)
	}
	return b, nil
}

func (r reader) integer(n *yaml.Node, key string, min int) (int, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, r.errf(n, key, "must be a whole number (got %s)", kindName(n))
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil {
		return 0, r.errf(n, key, "must be a whole number: %v", err)
	}
	if v < min {
		return 0, r.errf(n, key, "must be at least %d (got %d)", min, v)
	}
	return v, nil
}
