package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/docs"
)

// The memory tools (docs/design.md §14). The read tools are offered in every
// conversation; the write tools once the model loads the toolset
// WriteToolset.
const (
	ToolSearch   = "memory_search"
	ToolRead     = "memory_read"
	ToolList     = "memory_list"
	ToolHistory  = "memory_history"
	ToolRemember = "memory_remember"
	ToolPatch    = "memory_patch"
	ToolPropose  = "memory_propose_promotion"

	WriteToolset = "memory"
)

// agentAuthor is the Author of what the agent writes.
const agentAuthor = "agent"

// Tools returns the memory tools for core.Deps.Virtual. They see, read
// and change only documents of the scopes the calling conversation sees
// (Visible); the agent writes untrusted drafts of the conversation, its
// channel or its person, never workspace memory, which only an admin's
// promotion reaches. Every write is safety-scanned first.
func (m *Memory) Tools() []core.VirtualTool {
	ref := param{name: "path", schema: str("the document's path, e.g. runbooks/payments/rollback.md")}
	id := param{name: "id", schema: str("the document's id, instead of path")}
	scope := param{name: "scope", schema: enum("which of this conversation's scopes the path is in; without it the narrowest that has the path",
		"conversation", "user", "channel", "workspace")}
	return []core.VirtualTool{
		&memTool[searchArgs]{m: m, name: ToolSearch, run: m.searchTool,
			desc: "Search long-term memory (runbooks, incident lessons, conventions, notes) visible in this conversation. Returns paths, titles, scores and first lines; read a document with memory_read.",
			params: []param{
				{name: "query", required: true, schema: str("what to look for, in words")},
				{name: "limit", schema: integer("how many results, 1 to 20 (default 5)")},
			}},
		&memTool[readArgs]{m: m, name: ToolRead, run: m.readTool,
			desc:   "Read one memory document in full, with its sha256 (which memory_patch needs). Give path (and optionally scope) or id.",
			params: []param{ref, scope, id}},
		&memTool[listArgs]{m: m, name: ToolList, run: m.listTool,
			desc: "List the memory documents visible in this conversation (not archived ones), optionally of one scope or type.",
			params: []param{
				{name: "scope", schema: enum("only this scope", "conversation", "user", "channel", "workspace")},
				{name: "type", schema: enum("only this type", typeNames()...)},
			}},
		&memTool[readArgs]{m: m, name: ToolHistory, run: m.historyTool,
			desc:   "Show a memory document's versions, oldest first: when, by whom, why, and each version's sha256. Give path (and optionally scope) or id.",
			params: []param{ref, scope, id}},
		&memTool[rememberArgs]{m: m, name: ToolRemember, toolset: WriteToolset, run: m.rememberTool,
			desc: "Write a new memory document as an unreviewed draft: something worth knowing later (a lesson, a fact about a service, a preference). " +
				"It is kept in this conversation, its channel or the user's own memory; never workspace memory (propose a promotion for that). " +
				"Never store secrets, raw logs or instructions to yourself; summarise.",
			params: []param{
				{name: "title", required: true, schema: str("a short title")},
				{name: "content", required: true, schema: str("the note, in Markdown, at most 16 KiB")},
				{name: "path", schema: str("where to keep it, e.g. notes/payments-502.md (default: notes/<title>.md)")},
				{name: "type", schema: enum("what kind of knowledge it is (default conversation_note)", typeNames()...)},
				{name: "tags", schema: strList("tags")},
				{name: "entities", schema: entitiesSchema()},
				{name: "scope", schema: enum("who it is for (default conversation)", "conversation", "channel", "user")},
			}},
		&memTool[patchArgs]{m: m, name: ToolPatch, toolset: WriteToolset, run: m.patchTool,
			desc: "Change a memory draft: give expected_sha256 (from memory_read) and the fields to replace. Only drafts can be patched; " +
				"a changed document is a conflict: read it again. Give path (and optionally scope) or id.",
			params: []param{
				{name: "expected_sha256", required: true, schema: str("the sha256 memory_read showed")},
				ref, scope, id,
				{name: "content", schema: str("the new content (the whole of it)")},
				{name: "title", schema: str("the new title")},
				{name: "type", schema: enum("the new type", typeNames()...)},
				{name: "tags", schema: strList("the new tags (replacing the old ones)")},
				{name: "entities", schema: entitiesSchema()},
			}},
		&promoteTool{memTool[proposeArgs]{m: m, name: ToolPropose, toolset: WriteToolset,
			desc: "Ask an admin to promote a memory document to workspace memory, where every conversation sees it as trusted. " +
				"The admin decides later; nothing changes until then. Give path (and optionally scope) or id, and the reason.",
			params: []param{
				{name: "reason", required: true, schema: str("why everyone should know this")},
				ref, scope, id,
			}}},
	}
}

// memTool is one memory tool: its arguments A are decoded strictly (see
// decodeArgs) before run sees them.
type memTool[A any] struct {
	m       *Memory
	name    string
	toolset string
	desc    string
	params  []param
	run     func(ctx context.Context, c core.VirtualCall, a A) core.ToolResult

	// schema is built at the first Schema call: every turn's catalogue
	// asks for it, and it never changes (issue 25).
	schemaOnce sync.Once
	schema     core.ToolSchema
}

var _ core.VirtualTool = (*memTool[searchArgs])(nil)

func (t *memTool[A]) Schema() core.ToolSchema {
	t.schemaOnce.Do(func() { t.schema = t.buildSchema() })
	return t.schema
}

func (t *memTool[A]) buildSchema() core.ToolSchema {
	props := map[string]any{}
	var required []string
	for _, p := range t.params {
		props[p.name] = p.schema
		if p.required {
			required = append(required, p.name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	b, _ := json.Marshal(s) // maps of strings and slices always marshal
	return core.ToolSchema{Name: t.name, Description: t.desc, Parameters: b}
}

func (t *memTool[A]) Toolset() string { return t.toolset }

func (t *memTool[A]) Call(ctx context.Context, c core.VirtualCall) core.ToolResult {
	var a A
	if err := decodeArgs(c.Arguments, t.params, &a); err != nil {
		return failf("invalid arguments for %s: %v; nothing was done. Fix the arguments and call it again.", t.name, err)
	}
	return t.run(ctx, c, a)
}

// param is one argument of a memory tool.
type param struct {
	name     string
	required bool
	schema   map[string]any
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

func integer(desc string) map[string]any {
	return map[string]any{"type": "integer", "description": desc}
}

func enum(desc string, values ...string) map[string]any {
	return map[string]any{"type": "string", "enum": values, "description": desc}
}

func strList(desc string) map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": desc}
}

func entitiesSchema() map[string]any {
	return map[string]any{
		"type":        "object",
		"description": "what it is about, kind -> values, e.g. {\"namespace\": [\"payments\"], \"service\": [\"payments-api\"]}; kinds: namespace, service, workload, environment, incident",
		"additionalProperties": map[string]any{
			"type": "array", "items": map[string]any{"type": "string"},
		},
	}
}

func typeNames() []string {
	out := make([]string, len(docs.Types))
	for i, t := range docs.Types {
		out[i] = string(t)
	}
	return out
}

// decodeArgs decodes a JSON object of arguments into dst strictly: every
// unknown argument is named, a missing required one is an error, and so
// is a value of the wrong JSON type.
func decodeArgs(raw json.RawMessage, ps []param, dst any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return errors.New("want a JSON object")
	}
	var names, unknown []string
	for _, p := range ps {
		names = append(names, p.name)
	}
	for k := range obj {
		if !slices.Contains(names, k) {
			unknown = append(unknown, fmt.Sprintf("%q", k))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		word := "argument"
		if len(unknown) > 1 {
			word = "arguments"
		}
		return fmt.Errorf("unknown %s %s (allowed: %s)", word, strings.Join(unknown, ", "), strings.Join(names, ", "))
	}
	for _, p := range ps {
		if v, ok := obj[p.name]; p.required && (!ok || string(bytes.TrimSpace(v)) == "null") {
			return fmt.Errorf("missing required argument %q", p.name)
		}
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("argument %q: got a JSON %s, want %s", te.Field, te.Value, jsonType(te.Type))
		}
		return err
	}
	return nil
}

func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Slice:
		return "a list of strings"
	case reflect.Map:
		return "an object"
	}
	return t.String()
}

// values is an entity's values: a JSON string or a list of strings.
type values []string

func (v *values) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*v = values{s}
		return nil
	}
	var ss []string
	if err := json.Unmarshal(b, &ss); err != nil {
		return errors.New(`"entities": each value must be a string or a list of strings`)
	}
	*v = ss
	return nil
}

func entitiesOf(es map[string]values) map[string][]string {
	if es == nil {
		return nil
	}
	out := map[string][]string{}
	for k, vs := range es {
		out[k] = append(out[k], vs...)
	}
	return cleanEntities(out)
}

func fail(msg string) core.ToolResult { return core.ToolResult{IsError: true, Content: msg} }

func failf(format string, args ...any) core.ToolResult { return fail(fmt.Sprintf(format, args...)) }

// storeFailed is the result of a store error: the model is told, the
// operator gets the log line.
func (m *Memory) storeFailed(c core.VirtualCall, tool string, err error) core.ToolResult {
	m.opt.Logger.Error("memory tool: store failed", "tool", tool, "conv", c.ConvKey, "run", c.RunID, "err", err)
	return failf("%s failed: the memory store is unavailable (%v); nothing was changed", tool, err)
}
