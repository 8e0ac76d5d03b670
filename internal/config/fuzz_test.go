package config

import (
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// fuzzEnv is the environment of FuzzConfigFile: UNSET* variables are
// empty, DOLLAR expands to text with $ and braces in it, anything else to
// a value naming the variable.
func fuzzEnv(name string) string {
	switch {
	case strings.HasPrefix(name, "UNSET"):
		return ""
	case name == "DOLLAR":
		return "a$b${C}$$"
	}
	return "v-" + name
}

// FuzzConfigFile feeds arbitrary bytes to the config file parser. Whatever
// it accepts must read back the same: the configuration written out again
// as YAML (every key, $ escaped as $$) parses to an equal configuration,
// so no value is silently mangled by ${VAR} expansion, aliases or type
// conversion. A rejected file is one error that names config. The rest of
// Load (environment overrides, dependent defaults, validation) never
// panics on what the parser accepted.
func FuzzConfigFile(f *testing.F) {
	if b, err := os.ReadFile("../../configs/opsgate.example.yaml"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		"llm:\n  api_key: ${OPENAI_API_KEY}\n  timeout: 90s\n  max_iterations: 7\n",
		"telegram:\n  enabled: off\n  token: \"${UNSET_TOKEN}\"\n  allowed_users: [1, -2]\n",
		"tools:\n  servers:\n    - name: k8s\n      url: http://x/mcp\n      headers: {Authorization: Bearer $${X}}\n      env: {A: ~}\n",
		"schedules:\n  - &s {name: a, cron: '@hourly', prompt: p, target: log, catch_up: 1h}\n  - *s\n",
		"llm: {model: pa$word}\nstore: {url: ${DOLLAR}}\n",
		"tools: {default_toolsets: []}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Defaults()
		err := c.parse(data, "fuzz.yaml", fuzzEnv)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config: ") {
				t.Fatalf("error %q does not start with \"config: \"", err)
			}
			return
		}
		again, err := yaml.Marshal(fileNode(reflect.ValueOf(c)))
		if err != nil {
			t.Fatalf("writing the parsed config out: %v", err)
		}
		c2 := Defaults()
		if err := c2.parse(again, "again.yaml", fuzzEnv); err != nil {
			t.Fatalf("the parsed config written out does not parse: %v\n%s", err, again)
		}
		if diff := cmp.Diff(c, c2, ignoreInternal); diff != "" {
			t.Fatalf("parse(write(parse(file))) differs (-first +second):\n%s\nwritten:\n%s", diff, again)
		}

		// The rest of Load.
		if err := c.applyEnv(fuzzEnv); err != nil {
			return
		}
		c.fillDefaults(fuzzEnv)
		if err := c.Validate(); err != nil && !strings.HasPrefix(err.Error(), "config: ") {
			t.Fatalf("validation error %q does not start with \"config: \"", err)
		}
		s := c.Secrets()
		if slices.Contains(s, "") || !slices.IsSorted(s) || len(slices.Compact(slices.Clone(s))) != len(s) {
			t.Fatalf("Secrets() = %q: want sorted, distinct, non-empty values", s)
		}
	})
}

// fileNode writes v (a Config or a part of one) as the YAML node a file
// would hold for it: every key the decoder knows, nil pointers, slices and
// maps left out (they read back as not written), strings with $ doubled so
// that they are not expanded again.
func fileNode(v reflect.Value) *yaml.Node {
	if v.Type() == durationType {
		return &yaml.Node{Kind: yaml.ScalarNode, Value: time.Duration(v.Int()).String()}
	}
	switch v.Kind() {
	case reflect.Pointer:
		return fileNode(v.Elem())
	case reflect.Struct:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for i := range v.NumField() {
			key, f := tagName(v.Type().Field(i)), v.Field(i)
			if key == "" || (f.Kind() == reflect.Pointer || f.Kind() == reflect.Slice || f.Kind() == reflect.Map) && f.IsNil() {
				continue
			}
			n.Content = append(n.Content, str(key), fileNode(f))
		}
		return n
	case reflect.Slice:
		n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for i := range v.Len() {
			n.Content = append(n.Content, fileNode(v.Index(i)))
		}
		return n
	case reflect.Map:
		n := &yaml.Node{Kind: yaml.MappingNode}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			n.Content = append(n.Content, str(k.String()), fileNode(v.MapIndex(k)))
		}
		return n
	case reflect.String:
		return str(strings.ReplaceAll(v.String(), "$", "$$"))
	case reflect.Bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatBool(v.Bool())}
	case reflect.Float32, reflect.Float64:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatFloat(v.Float(), 'g', -1, 64)}
	default:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatInt(v.Int(), 10)}
	}
}

func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: s}
}
