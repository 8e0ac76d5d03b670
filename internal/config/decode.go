package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

var durationType = reflect.TypeFor[time.Duration]()

// decoder walks a YAML node tree into a Go value by the yaml tags, so that
// every error can name the exact key (llm.max_iterations, not "line 3:
// cannot unmarshal !!str into int") and unknown keys get a suggestion.
// A null value keeps what the target already holds (a default).
type decoder struct {
	// where locates the source in messages: a file name or an env var.
	where string
	// expand applies ${VAR} expansion to scalar values (file values only).
	expand bool
	getenv func(string) string
	// lines and unset, when not nil, record the key paths written with
	// their lines and the ${VAR}s that expanded to nothing in each value
	// (see Config.fileKeys and Config.unset).
	lines map[string]int
	unset map[string]unsetVars
}

// unsetVars are the ${VAR}s of one value that expanded to nothing.
type unsetVars struct {
	names []string
	line  int
	// emptied: the value is a string that they left empty.
	emptied bool
}

// errorf returns an error about the key at path; line is 0 when unknown.
func (d *decoder) errorf(path string, n *yaml.Node, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if path == "" {
		path = "(top level)"
	}
	switch {
	case n != nil && n.Line > 0 && d.where != "":
		return fmt.Errorf("config: %s: %s (%s line %d)", path, msg, d.where, n.Line)
	case d.where != "":
		return fmt.Errorf("config: %s: %s (%s)", path, msg, d.where)
	default:
		return fmt.Errorf("config: %s: %s", path, msg)
	}
}

func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if v.Type() == durationType {
		_, err := d.scalar(n, v, path)
		return err
	}
	switch v.Kind() {
	case reflect.Pointer:
		// A pointer tells a key not written (nil) from a written zero
		// value, as enabled: false needs.
		elem := reflect.New(v.Type().Elem())
		set, err := d.scalar(n, elem.Elem(), path)
		if set {
			v.Set(elem)
		}
		return err
	case reflect.Struct:
		return d.structure(n, v, path)
	case reflect.Slice:
		return d.list(n, v, path)
	case reflect.Map:
		return d.dict(n, v, path)
	default:
		_, err := d.scalar(n, v, path)
		return err
	}
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return d.errorf(path, n, "must be a mapping of keys (got %s)", kindName(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := join(path, k.Value)
		if seen[k.Value] {
			return d.errorf(key, k, "set twice")
		}
		seen[k.Value] = true
		if d.lines != nil {
			d.lines[key] = k.Line
		}
		f, ok := fieldByKey(v, k.Value)
		if !ok {
			return d.errorf(key, k, "unknown key%s", suggest(v.Type(), path, k.Value))
		}
		if err := d.decode(val, f, key); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.SequenceNode {
		return d.errorf(path, n, "must be a list (got %s)", kindName(n))
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		if d.lines != nil {
			d.lines[p] = item.Line
		}
		if err := d.decode(item, out.Index(i), p); err != nil {
			return err
		}
	}
	v.Set(out)
	return nil
}

func (d *decoder) dict(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return d.errorf(path, n, "must be a mapping (got %s)", kindName(n))
	}
	out := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		elem := reflect.New(v.Type().Elem()).Elem()
		key := path + "." + k.Value
		if d.lines != nil {
			d.lines[key] = k.Line
		}
		if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
			out.SetMapIndex(reflect.ValueOf(k.Value), elem)
			continue
		}
		if err := d.decode(val, elem, key); err != nil {
			return err
		}
		out.SetMapIndex(reflect.ValueOf(k.Value), elem)
	}
	v.Set(out)
	return nil
}

// scalar sets v from n; set is false when the value expanded to nothing
// and v keeps what it held.
func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) (set bool, err error) {
	if n.Kind != yaml.ScalarNode {
		return false, d.errorf(path, n, "must be a single value (got %s)", kindName(n))
	}
	s := n.Value
	if d.expand {
		var unset []string
		getenv := func(name string) string {
			val := d.getenv(name)
			if val == "" {
				unset = append(unset, name)
			}
			return val
		}
		if s, err = expand(s, getenv); err != nil {
			return false, d.errorf(path, n, "%v", err)
		}
		if len(unset) > 0 && d.unset != nil {
			d.unset[path] = unsetVars{names: unset, line: n.Line, emptied: v.Kind() == reflect.String && s == ""}
		}
	}
	if v.Kind() == reflect.String {
		v.SetString(s)
		return true, nil
	}
	s = strings.TrimSpace(s)
	if s == "" {
		// "${UNSET}" in a number or switch keeps the default.
		return false, nil
	}
	switch {
	case v.Type() == durationType:
		dur, err := time.ParseDuration(s)
		if err != nil {
			return false, d.errorf(path, n, "%q is not a duration (use a number with a unit, e.g. 30m or 1h)", s)
		}
		v.SetInt(int64(dur))
	case v.Kind() == reflect.Bool:
		b, ok := parseBool(s)
		if !ok {
			return false, d.errorf(path, n, "must be true or false (got %q)", s)
		}
		v.SetBool(b)
	case v.CanInt():
		i, err := strconv.ParseInt(s, 10, v.Type().Bits())
		if err != nil {
			return false, d.errorf(path, n, "must be a whole number (got %q)", s)
		}
		v.SetInt(i)
	case v.CanFloat():
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return false, d.errorf(path, n, "must be a number (got %q)", s)
		}
		v.SetFloat(f)
	default:
		return false, d.errorf(path, n, "unsupported type %s", v.Type())
	}
	return true, nil
}

func parseBool(s string) (b, ok bool) {
	switch strings.ToLower(s) {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0":
		return false, true
	}
	return false, false
}

// fieldByKey returns the struct field whose yaml tag is key. The empty
// key is none: fields that are not in the file have the tag name "".
func fieldByKey(v reflect.Value, key string) (reflect.Value, bool) {
	if key == "" {
		return reflect.Value{}, false
	}
	t := v.Type()
	for i := range t.NumField() {
		if tagName(t.Field(i)) == key {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// tagName is the YAML key of a field, "" for fields not in the file.
func tagName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

// expand replaces ${VAR} with the variable's value (empty when undefined)
// and $$ with $. Any other $ is kept, so "pa$word" survives.
func expand(s string, getenv func(string) string) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated ${ in %q (write $$ for a literal $)", s)
			}
			name := s[i+2 : i+2+end]
			if !validVarName(name) {
				return "", fmt.Errorf("${%s}: not a valid environment variable name (write $$ for a literal $)", name)
			}
			b.WriteString(getenv(name))
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || (i > 0 && '0' <= r && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}
