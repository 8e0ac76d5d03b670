package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/opsgate/opsgate/core"
)

// schemaURL names every compiled input schema; it is never fetched.
const schemaURL = "urn:opsgate:tool-input"

// maxCachedSchemas bounds the cache; past it, the cache starts over.
const maxCachedSchemas = 4096

// maxProblems bounds how many validation problems one error lists.
const maxProblems = 8

// schemaCache compiles each distinct input schema once, and keeps the full
// input schemas of the tools the servers listed: the model sees compacted
// ones (compactSchema), arguments are checked against what the server
// declared.
type schemaCache struct {
	mu     sync.Mutex
	m      map[[sha256.Size]byte]compiled
	listed map[string]map[string]json.RawMessage // toolset -> remote name -> full schema
}

type compiled struct {
	schema *jsonschema.Schema
	err    error
}

func newSchemaCache() *schemaCache {
	return &schemaCache{m: map[[sha256.Size]byte]compiled{}, listed: map[string]map[string]json.RawMessage{}}
}

// setListed replaces the full schemas of toolset's tools after a listing.
func (sc *schemaCache) setListed(toolset string, full map[string]json.RawMessage) {
	sc.mu.Lock()
	sc.listed[toolset] = full
	sc.mu.Unlock()
}

// schemaOf returns the schema to validate tool's arguments against: the full
// schema its server listed under (tool.Toolset, tool.Remote), so that no
// compaction of what the model sees can loosen a check; tool.InputSchema
// only for a tool no server listed.
func (sc *schemaCache) schemaOf(tool core.Tool) json.RawMessage {
	remote := tool.Remote
	if remote == "" {
		remote = tool.Name
	}
	sc.mu.Lock()
	full, ok := sc.listed[tool.Toolset][remote]
	sc.mu.Unlock()
	if ok {
		return full
	}
	return tool.InputSchema
}

// validate checks args against tool's input schema (schemaOf). Its errors
// are read by the model, which is why they carry no "tools:" prefix and
// end with what to do.
func (sc *schemaCache) validate(tool core.Tool, args json.RawMessage) error {
	sch, err := sc.get(sc.schemaOf(tool))
	if err != nil {
		return fmt.Errorf("%s cannot be called: its input schema is invalid, so its arguments cannot be checked (%v); use another tool", tool.Name, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(orEmptyObject(args)))
	if err != nil {
		return fmt.Errorf("arguments for %s are not valid JSON (%v); send the arguments as one JSON object", tool.Name, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("arguments for %s must be a JSON object, not %s; send the arguments as one JSON object", tool.Name, jsonKind(v))
	}
	err = sch.Validate(v)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return fmt.Errorf("invalid arguments for %s: %s; fix the arguments to match the tool's input schema and call it again", tool.Name, problems(ve))
	}
	if err != nil {
		return fmt.Errorf("invalid arguments for %s: %v", tool.Name, err)
	}
	return nil
}

func (sc *schemaCache) get(schema json.RawMessage) (*jsonschema.Schema, error) {
	key := sha256.Sum256(schema)
	sc.mu.Lock()
	c, ok := sc.m[key]
	sc.mu.Unlock()
	if ok {
		return c.schema, c.err
	}
	// Compiled outside the lock; two callers may both compile a new
	// schema, which is harmless.
	c.schema, c.err = compile(schema)
	sc.mu.Lock()
	if len(sc.m) >= maxCachedSchemas {
		clear(sc.m)
	}
	sc.m[key] = c
	sc.mu.Unlock()
	return c.schema, c.err
}

// compile compiles an input schema. mcp-go drops "$schema" from listed
// schemas, so the draft is unknown: 2020-12 is tried first, then the
// drafts older servers write (07, 04). A schema no draft accepts is an
// error, never "no validation".
func compile(schema json.RawMessage) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	var first error
	for _, draft := range []*jsonschema.Draft{jsonschema.Draft2020, jsonschema.Draft7, jsonschema.Draft4} {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(draft)
		// A schema comes from a server: it must not make opsgate read
		// local files or fetch URLs through "$ref".
		c.UseLoader(noLoader{})
		if err := c.AddResource(schemaURL, doc); err != nil {
			return nil, err
		}
		sch, err := c.Compile(schemaURL)
		if err == nil {
			return sch, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// noLoader refuses every external reference.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q is not allowed", url)
}

// problems lists the leaf validation errors as "where: what".
func problems(ve *jsonschema.ValidationError) string {
	var list []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		where := strings.TrimPrefix(u.InstanceLocation, "/")
		if where == "" {
			where = "arguments"
		}
		list = append(list, where+": "+u.Error.String())
	}
	if len(list) == 0 {
		return ve.Error()
	}
	if len(list) > maxProblems {
		list = append(list[:maxProblems], fmt.Sprintf("and %d more problems", len(list)-maxProblems))
	}
	return strings.Join(list, "; ")
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	default:
		return "a number"
	}
}

// orEmptyObject treats absent arguments as {}, as models send "" for tools
// without parameters.
func orEmptyObject(args json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return json.RawMessage("{}")
	}
	return args
}

// argsObject returns args as they go on the wire: one JSON object.
func argsObject(args json.RawMessage) (json.RawMessage, error) {
	args = orEmptyObject(args)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return nil, errors.New("its arguments must be one JSON object")
	}
	return args, nil
}
