package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// direct is figure 1's baseline: the least a program can do to hold the
// same conversation — openai-go streaming the same script from the same
// server, a strings.Builder for the text, the tool call made straight
// through an mcp-go client to the same MCP server — and nothing else: no
// store, no events, no validation, no approval gate.
type direct struct {
	chat  openai.ChatCompletionService
	mcp   *client.Client
	tools []openai.ChatCompletionToolUnionParam
}

func newDirect(ctx context.Context, baseURL string, srv *server.MCPServer) (*direct, error) {
	d := &direct{chat: openai.NewChatCompletionService(
		option.WithBaseURL(baseURL), option.WithAPIKey("bench-key"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}),
	)}
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		return nil, err
	}
	d.mcp = c
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	var init mcp.InitializeRequest
	init.Params.ClientInfo = mcp.Implementation{Name: "bench-direct", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return nil, err
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	// The same tools the engine offers by default: the read-only ones.
	for _, t := range list.Tools {
		if t.Annotations.ReadOnlyHint == nil || !*t.Annotations.ReadOnlyHint {
			continue
		}
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, err
		}
		var params shared.FunctionParameters
		if err := json.Unmarshal(b, &params); err != nil {
			return nil, err
		}
		d.tools = append(d.tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: params,
		}))
	}
	return d, nil
}

func (d *direct) close() { _ = d.mcp.Close() }

// conversation holds the scripted conversation: the greeting, then the
// question, whose answer needs a tool call.
func (d *direct) conversation(ctx context.Context) error {
	msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(systemPrompt), openai.UserMessage(greeting)}
	msgs, err := d.run(ctx, msgs)
	if err != nil {
		return err
	}
	_, err = d.run(ctx, append(msgs, openai.UserMessage(question)))
	return err
}

// run streams model calls, running their tool calls, until the model
// answers without one.
func (d *direct) run(ctx context.Context, msgs []openai.ChatCompletionMessageParamUnion) ([]openai.ChatCompletionMessageParamUnion, error) {
	for range 10 {
		text, calls, err := d.stream(ctx, msgs)
		if err != nil {
			return nil, err
		}
		a := openai.ChatCompletionAssistantMessageParam{}
		if text != "" || len(calls) == 0 {
			a.Content.OfString = openai.String(text)
		}
		for _, c := range calls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: c.id, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.name, Arguments: c.args.String()},
				},
			})
		}
		msgs = append(msgs, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		if len(calls) == 0 {
			return msgs, nil
		}
		for _, c := range calls {
			var req mcp.CallToolRequest
			req.Params.Name = c.name
			req.Params.Arguments = json.RawMessage(c.args.String())
			res, err := d.mcp.CallTool(ctx, req)
			if err != nil {
				return nil, err
			}
			var out strings.Builder
			for _, content := range res.Content {
				if tc, ok := mcp.AsTextContent(content); ok {
					out.WriteString(tc.Text)
				}
			}
			msgs = append(msgs, openai.ToolMessage(out.String(), c.id))
		}
	}
	return nil, fmt.Errorf("bench: direct run did not end")
}

type directCall struct {
	id, name string
	args     strings.Builder
}

func (d *direct) stream(ctx context.Context, msgs []openai.ChatCompletionMessageParamUnion) (string, []*directCall, error) {
	st := d.chat.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model: "bench-model", Messages: msgs, Tools: d.tools,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	defer st.Close()
	var text strings.Builder
	var calls []*directCall
	for st.Next() {
		for _, ch := range st.Current().Choices {
			text.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				for int(tc.Index) >= len(calls) {
					calls = append(calls, &directCall{})
				}
				c := calls[tc.Index]
				if tc.ID != "" {
					c.id = tc.ID
				}
				if tc.Function.Name != "" {
					c.name = tc.Function.Name
				}
				c.args.WriteString(tc.Function.Arguments)
			}
		}
	}
	return text.String(), calls, st.Err()
}
