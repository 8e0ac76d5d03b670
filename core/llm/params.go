package llm

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/opsgate/opsgate/core"
)

// params maps a core request to Chat Completions parameters.
func (c *Client) params(req core.ModelRequest) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(c.cfg.Model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if c.cfg.ReasoningEffort != "" {
		p.ReasoningEffort = shared.ReasoningEffort(c.cfg.ReasoningEffort)
	}
	if c.cfg.MaxTokens > 0 {
		if c.completionTokens {
			p.MaxCompletionTokens = openai.Int(int64(c.cfg.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(c.cfg.MaxTokens))
		}
	}
	for i, m := range req.Messages {
		mp, err := messageParam(m)
		if err != nil {
			return p, fatalf("message %d: %v", i, err)
		}
		p.Messages = append(p.Messages, mp)
	}
	for _, t := range req.Tools {
		params, err := functionParameters(t.Parameters)
		if err != nil {
			return p, fatalf("tool %q: input schema: %v", t.Name, err)
		}
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(def))
	}
	return p, nil
}

func messageParam(m core.Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case core.RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case core.RoleUser:
		// Name is a display name here; OpenAI restricts name to
		// [a-zA-Z0-9_-]{1,64}, so it is not sent.
		return openai.UserMessage(m.Content), nil
	case core.RoleTool:
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	case core.RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
		// Content may be omitted only next to tool calls (Ollama rejects a
		// null content otherwise).
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			args := string(tc.Arguments)
			if len(bytes.TrimSpace(tc.Arguments)) == 0 {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
}

// functionParameters turns a tool's JSON Schema into function parameters.
// Servers want an object schema with properties, so an empty schema becomes
// {"type":"object","properties":{}} and an object schema without properties
// gets an empty one.
func functionParameters(schema json.RawMessage) (shared.FunctionParameters, error) {
	empty := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	trimmed := bytes.TrimSpace(schema)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return empty, nil
	}
	// Values stay raw JSON: decoding them would turn numbers into float64,
	// and the library encodes json.Number as a string.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if len(top) == 0 {
		return empty, nil
	}
	m := make(shared.FunctionParameters, len(top)+2)
	for k, v := range top {
		m[k] = v
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	if _, ok := m["properties"]; !ok && isObjectType(top["type"]) {
		m["properties"] = map[string]any{}
	}
	return m, nil
}

func isObjectType(raw json.RawMessage) bool {
	var t string
	return raw == nil || (json.Unmarshal(raw, &t) == nil && t == "object")
}
