package tools

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/opsgate/opsgate/core/coretest/mcpfake"
)

func TestCompactText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"short stays", "Name of the Pod", "Name of the Pod"},
		{"whitespace collapsed", "  Name of\n\tthe   Pod ", "Name of the Pod"},
		{"first sentence", "Command to execute. The first item is the command, the rest its arguments.", "Command to execute."},
		{"abbreviation is no sentence end", "Image (e.g. busybox). Pulled when missing.", "Image (e.g. busybox)."},
		{"period inside brackets is no sentence end", "Selector (one field. Or two). Default all.", "Selector (one field. Or two)."},
		{"lower case after period is no sentence end", "Version, e.g. 1.2. or later", "Version, e.g. 1.2. or later"},
		{"cut at a word boundary",
			"If true, list the resource consumption for all Pods in all namespaces and more",
			"If true, list the resource consumption for all Pods in all…"},
		{"open aside closed",
			"Namespace to run the Pod in (Optional, the current namespace if not provided)",
			"Namespace to run the Pod in (Optional, the current namespace…)"},
		{"short open aside dropped",
			"Optional Kubernetes label selector (e.g. 'app=checkout,tier=web' or 'env in (prod,staging)')",
			"Optional Kubernetes label selector…"},
		{"one long word cut inside", strings.Repeat("x", 100), strings.Repeat("x", 63) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := compactText(tt.in, 64)
			if got != tt.want {
				t.Errorf("compactText(%q) =\n%q, want\n%q", tt.in, got, tt.want)
			}
			if n := utf8.RuneCountInString(got); n > 64 {
				t.Errorf("compactText(%q) has %d characters, want at most 64", tt.in, n)
			}
		})
	}
}

func TestCompactSchema(t *testing.T) {
	long := "Optional Kubernetes field selector (e.g. 'status.phase=Running'). Supported fields: metadata.name, spec.nodeName."
	tests := []struct {
		name, in, want string
	}{
		{"constraints kept, key order kept",
			`{"type":"object","properties":{"z":{"type":"integer","minimum":0,"maximum":10,"default":3},"a":{"type":"string","enum":["x","y"],"pattern":"^[a-z]+$","format":"hostname","examples":["web"]}},"required":["z"],"additionalProperties":false}`,
			`{"type":"object","properties":{"z":{"type":"integer","minimum":0,"maximum":10,"default":3},"a":{"type":"string","enum":["x","y"],"pattern":"^[a-z]+$","format":"hostname","examples":["web"]}},"required":["z"],"additionalProperties":false}`},
		{"schema noise dropped",
			`{"$schema":"http://json-schema.org/draft-07/schema#","$comment":"generated","title":"pods_get","type":"object","required":[],"properties":{"name":{"title":"Name","type":"string","description":""}}}`,
			`{"type":"object","properties":{"name":{"type":"string"}}}`},
		{"title beside a description dropped, a title alone kept",
			`{"type":"object","properties":{"a":{"title":"Alpha","description":"First"},"b":{"title":"The second value"}}}`,
			`{"type":"object","properties":{"a":{"description":"First"},"b":{"title":"The second value"}}}`},
		{"descriptions cut everywhere a schema can be",
			`{"type":"object","description":"` + long + `","properties":{"s":{"type":"array","description":"` + long + `","items":{"type":"object","properties":{"f":{"type":"string","description":"` + long + `"}}}},"u":{"anyOf":[{"type":"string","description":"` + long + `"},{"$ref":"#/$defs/d"}]}},"$defs":{"d":{"type":"integer","description":"` + long + `"}}}`,
			`{"type":"object","description":"%s","properties":{"s":{"type":"array","description":"%s","items":{"type":"object","properties":{"f":{"type":"string","description":"%s"}}}},"u":{"anyOf":[{"type":"string","description":"%s"},{"$ref":"#/$defs/d"}]}},"$defs":{"d":{"type":"integer","description":"%s"}}}`},
		{"properties named like keywords are names",
			`{"type":"object","properties":{"description":{"type":"string"},"title":{"type":"string"},"$comment":{"type":"string"}},"required":["description","title","$comment"]}`,
			`{"type":"object","properties":{"description":{"type":"string"},"title":{"type":"string"},"$comment":{"type":"string"}},"required":["description","title","$comment"]}`},
		{"data that looks like a schema is data",
			`{"type":"object","default":{"title":"x","description":"` + long + `"},"enum":[{"$comment":"kept"}]}`,
			`{"type":"object","default":{"title":"x","description":"` + long + `"},"enum":[{"$comment":"kept"}]}`},
		{"no HTML escaping, numbers exact",
			`{"type":"object","properties":{"n":{"type":"number","maximum":1e400,"description":"<count> \u0026 more"}}}`,
			`{"type":"object","properties":{"n":{"type":"number","maximum":1e400,"description":"<count> & more"}}}`},
		{"not JSON is left alone", `{"type":`, `{"type":`},
		{"not an object is left alone", `true`, `true`},
	}
	cutLong := compactText(long, maxPropertyDescription)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := strings.ReplaceAll(tt.want, "%s", cutLong)
			if got := string(compactSchema(json.RawMessage(tt.in), "pods_get")); got != want {
				t.Errorf("compactSchema:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// Compaction may only touch annotations: with descriptions and titles
// taken out of both, and an empty required list, the compact schema of
// every realistic tool is the full one.
func TestCompactSchemaKeepsEveryConstraint(t *testing.T) {
	n := newNames()
	var fullBytes, compactBytes int
	for _, rs := range mcpfake.Realistic() {
		for name, st := range rs.Server.ListTools() {
			tool, full, _ := convert(rs.Name, st.Tool, n, Annotations{})
			fullBytes, compactBytes = fullBytes+len(full), compactBytes+len(tool.InputSchema)
			if len(tool.InputSchema) > len(full) {
				t.Errorf("%s/%s: compact schema is larger (%d > %d bytes)", rs.Name, name, len(tool.InputSchema), len(full))
			}
			if _, err := compile(tool.InputSchema); err != nil {
				t.Errorf("%s/%s: compact schema does not compile: %v", rs.Name, name, err)
			}
			if diff := cmp.Diff(withoutAnnotations(t, full), withoutAnnotations(t, tool.InputSchema)); diff != "" {
				t.Errorf("%s/%s: compaction changed more than annotations (-full +compact):\n%s", rs.Name, name, diff)
			}
			checkDescriptions(t, rs.Name+"/"+name, tool.InputSchema)
		}
	}
	t.Logf("input schemas: %d bytes full, %d compact", fullBytes, compactBytes)
	if compactBytes >= fullBytes {
		t.Errorf("compaction saved nothing")
	}
}

func withoutAnnotations(t *testing.T, schema json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(v any, inProperties bool)
	strip = func(v any, inProperties bool) {
		switch x := v.(type) {
		case map[string]any:
			if !inProperties {
				delete(x, "description")
				delete(x, "title")
				if r, ok := x["required"].([]any); ok && len(r) == 0 {
					delete(x, "required")
				}
			}
			for k, e := range x {
				strip(e, k == "properties" && !inProperties)
			}
		case []any:
			for _, e := range x {
				strip(e, false)
			}
		}
	}
	strip(v, false)
	return v
}

// checkDescriptions fails for a property description over the limit.
func checkDescriptions(t *testing.T, tool string, schema json.RawMessage) {
	t.Helper()
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	for name, p := range s.Properties {
		if n := utf8.RuneCountInString(p.Description); n > maxPropertyDescription {
			t.Errorf("%s: %s has a %d-character description, want at most %d", tool, name, n, maxPropertyDescription)
		}
	}
}

func TestToolDescription(t *testing.T) {
	sentence := "Lists the pods of a namespace with their status. "
	long := strings.Repeat(sentence, 30) // 1,470 characters
	tests := []struct {
		name string
		tool mcp.Tool
		want string
	}{
		{"lines kept, spaces and blank lines collapsed",
			mcp.Tool{Description: "  List pods.\n\n\n  Filters:   label,\tfield  \n"}, "List pods.\nFilters: label, field"},
		{"title when no description", mcp.Tool{Title: " Pods  list "}, "Pods list"},
		{"one character over", mcp.Tool{Description: strings.Repeat("x", maxDescription+1)}, strings.Repeat("x", maxDescription-1) + "…"},
		{"cut at the last sentence end that fits",
			mcp.Tool{Description: long}, strings.TrimSpace(strings.Repeat(sentence, maxDescription/len(sentence)))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := description(tt.tool); got != tt.want {
				t.Errorf("description = %q, want %q", got, tt.want)
			}
		})
	}
}
