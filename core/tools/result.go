package tools

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/opsgate/opsgate/core"
)

// render turns a tool result into text for the model: text contents as
// they are, other contents as a short bracketed description, and the
// structured content as JSON when there is no text (a tool that returns
// both is expected to repeat the structure in text).
func render(r *mcp.CallToolResult) core.ToolResult {
	var parts []string
	text := false
	for _, c := range r.Content {
		s, isText := renderContent(c)
		text = text || isText
		if s != "" {
			parts = append(parts, s)
		}
	}
	if !text {
		if s := structured(r); s != "" {
			parts = append(parts, s)
		}
	}
	out := core.ToolResult{Content: strings.Join(parts, "\n"), IsError: r.IsError}
	if out.Content == "" && out.IsError {
		out.Content = "the tool failed without saying why"
	}
	return out
}

func renderContent(c mcp.Content) (s string, text bool) {
	switch v := c.(type) {
	case mcp.TextContent:
		return v.Text, true
	case *mcp.TextContent:
		return v.Text, true
	case mcp.ImageContent:
		return fmt.Sprintf("[image %s, %s]", v.MIMEType, size(v.Data)), false
	case *mcp.ImageContent:
		return fmt.Sprintf("[image %s, %s]", v.MIMEType, size(v.Data)), false
	case mcp.AudioContent:
		return fmt.Sprintf("[audio %s, %s]", v.MIMEType, size(v.Data)), false
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio %s, %s]", v.MIMEType, size(v.Data)), false
	case mcp.ResourceLink:
		return link(v), false
	case *mcp.ResourceLink:
		return link(*v), false
	case mcp.EmbeddedResource:
		return resource(v.Resource)
	case *mcp.EmbeddedResource:
		return resource(v.Resource)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Sprintf("[%T content]", c), false
	}
	return string(b), false
}

func link(l mcp.ResourceLink) string {
	s := fmt.Sprintf("[resource %s: %s]", l.Name, l.URI)
	if l.Description != "" {
		s += " " + l.Description
	}
	return s
}

func resource(rc mcp.ResourceContents) (string, bool) {
	switch v := rc.(type) {
	case mcp.TextResourceContents:
		return fmt.Sprintf("[resource %s]\n%s", v.URI, v.Text), true
	case *mcp.TextResourceContents:
		return fmt.Sprintf("[resource %s]\n%s", v.URI, v.Text), true
	case mcp.BlobResourceContents:
		return fmt.Sprintf("[resource %s: %s, %s]", v.URI, v.MIMEType, size(v.Blob)), false
	case *mcp.BlobResourceContents:
		return fmt.Sprintf("[resource %s: %s, %s]", v.URI, v.MIMEType, size(v.Blob)), false
	}
	return "[resource]", false
}

func structured(r *mcp.CallToolResult) string {
	if len(r.RawStructuredContent) > 0 && string(r.RawStructuredContent) != "null" {
		return string(r.RawStructuredContent)
	}
	if r.StructuredContent == nil {
		return ""
	}
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		return ""
	}
	return string(b)
}

// size describes base64 data by its decoded size.
func size(b64 string) string {
	return fmt.Sprintf("%d bytes", base64.StdEncoding.DecodedLen(len(b64)))
}
