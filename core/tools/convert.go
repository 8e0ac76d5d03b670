package tools

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/opsgate/opsgate/core"
)

// maxDescription bounds a tool description, in characters: OpenAI rejects
// function descriptions over 1,024 characters, and every description is
// sent with every model call.
const maxDescription = 1024

// rejectAll is the input schema of a tool whose schema cannot be encoded:
// validation then refuses every call instead of letting one through unchecked.
var rejectAll = json.RawMessage(`{"type":"object","not":{}}`)

// convert turns a listed MCP tool into a core.Tool of toolset, whose
// InputSchema is the compact one the model sees and whose risk comes from
// its annotations and the server entry's overrides, and returns the
// server's full schema beside it, which is what arguments are validated
// against, and the read glob that matched it but could not loosen it.
func convert(toolset string, t mcp.Tool, names *names, over Annotations) (core.Tool, json.RawMessage, string) {
	full := inputSchema(t)
	c := over.classify(t.Name, t.Annotations)
	return core.Tool{
		Name:        names.assign(toolset, t.Name),
		Toolset:     toolset,
		Remote:      t.Name,
		Description: description(t),
		InputSchema: compactSchema(full, t.Name),
		Risk:        c.risk,
		RiskSource:  c.source,
	}, full, c.refused
}

// riskOf classifies a tool by its annotations alone (the server's own
// claims, which is why opsgate trusts a server only as far as its config
// does): no claim at all is a write, and only an explicit readOnlyHint is a
// read. Annotations.classify adds the configured overrides.
func riskOf(a mcp.ToolAnnotation) core.Risk {
	switch {
	// readOnlyHint wins: the MCP spec gives destructiveHint meaning only when
	// readOnlyHint is false, and mcp-go's NewTool presets destructiveHint
	// true, so servers built with it and marked read-only are reads.
	case a.ReadOnlyHint != nil && *a.ReadOnlyHint:
		return core.RiskRead
	case a.DestructiveHint != nil && *a.DestructiveHint:
		return core.RiskDestructive
	default:
		return core.RiskWrite
	}
}

// description is the tool's description (or title) with runs of spaces
// and blank lines collapsed, cut to maxDescription characters: at the last
// sentence end that keeps at least half of them, else at a word boundary.
func description(t mcp.Tool) string {
	d := collapseLines(t.Description)
	if d == "" {
		d = collapseLines(t.Title)
	}
	if d == "" {
		d = collapseLines(t.Annotations.Title)
	}
	if utf8.RuneCountInString(d) <= maxDescription {
		return d
	}
	// Ends are looked for in the first maxDescription characters plus the
	// two that tell a sentence end.
	r := []rune(d)
	head := string(r[:min(len(r), maxDescription+2)])
	last := 0
	for end := range sentenceEnds(head) {
		if utf8.RuneCountInString(head[:end]) <= maxDescription {
			last = end
		}
	}
	if last >= len(head)/2 {
		return head[:last]
	}
	return cutWords(d, maxDescription)
}

// collapseLines collapses runs of spaces inside lines and drops blank
// lines; line breaks stay, as servers use them for lists.
func collapseLines(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// inputSchema returns the tool's input schema as JSON. mcp-go decodes a
// listed schema into a struct (type, properties, required,
// additionalProperties, $defs); a missing type is set to "object", which
// MCP requires and OpenAI expects.
func inputSchema(t mcp.Tool) json.RawMessage {
	if len(t.RawInputSchema) > 0 {
		return t.RawInputSchema
	}
	s := t.InputSchema
	if s.Type == "" {
		s.Type = "object"
	}
	b, err := json.Marshal(s)
	if err != nil {
		return rejectAll
	}
	return b
}
