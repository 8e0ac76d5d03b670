package core

import (
	"context"
	"encoding/json"
	"fmt"
)

// Risk is how dangerous a tool is. Anything that is not RiskRead needs an
// approval before it runs; that cannot be configured away.
type Risk string

// Risks, from MCP annotations: readOnlyHint true -> read; destructiveHint
// true -> destructive; anything else (including no annotations) -> write.
// A server's entry in the configuration may make a tool that claims
// nothing a read, or any tool destructive (core/tools).
const (
	RiskRead        Risk = "read"
	RiskWrite       Risk = "write"
	RiskDestructive Risk = "destructive"
)

// NeedsApproval reports whether a call of this risk must be approved.
// Unknown values need approval too.
func (r Risk) NeedsApproval() bool { return r != RiskRead }

// RiskSource says where a tool's risk came from (docs/design.md §3), so
// that a read nobody is asked about can be traced to who declared it one.
type RiskSource string

// Risk sources. "" is unknown: a tool or audit entry from before sources
// were recorded.
const (
	// RiskFromAnnotation: the server's own MCP annotations decided.
	RiskFromAnnotation RiskSource = "annotation"
	// RiskConfigured: an override in the server's entry of tools.servers
	// (annotations: read or destructive) decided.
	RiskConfigured RiskSource = "configured"
	// RiskFromDefault: the server claimed nothing that decides, so the
	// tool is a write.
	RiskFromDefault RiskSource = "default"
)

// Tool is one tool of a toolset (an MCP server).
type Tool struct {
	// Name is the name the model sees and calls; unique across toolsets.
	Name string `json:"name"`
	// Toolset is the name of the MCP server that provides the tool.
	Toolset string `json:"toolset"`
	// Remote is the tool's name on its server (usually equal to Name).
	Remote      string          `json:"remote"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Risk        Risk            `json:"risk"`
	RiskSource  RiskSource      `json:"risk_source,omitempty"`
	// InProcess marks a virtual tool (load_toolset, memory_*): the engine
	// runs it itself, without a server and without approval.
	InProcess bool `json:"in_process,omitempty"`
}

// Schema returns the tool as the model sees it.
func (t Tool) Schema() ToolSchema {
	return ToolSchema{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}
}

// ToolHost is the set of tools opsgate can run. core/tools implements it over
// MCP servers. It must be safe for concurrent use.
type ToolHost interface {
	// Toolsets returns the names of the configured toolsets, in config order.
	Toolsets() []string
	// Tools lists the tools of one toolset, connecting (or reconnecting) to its
	// server when needed. A server that cannot be reached gives *UnavailableError.
	Tools(ctx context.Context, toolset string) ([]Tool, error)
	// Validate checks args against the tool's input schema. The error text is
	// written for the model to correct its call.
	Validate(tool Tool, args json.RawMessage) error
	// Call runs the tool. A failure of the tool itself is a ToolResult with
	// IsError; a Go error means the server failed (*UnavailableError) or ctx
	// ended. progress may be nil.
	Call(ctx context.Context, tool Tool, args json.RawMessage, progress func(Progress)) (ToolResult, error)
}

// ToolResult is what a tool returned, as text for the model.
type ToolResult struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// Progress is a best-effort progress report of a running tool.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// UnavailableError reports an MCP server that failed to start, died or stopped
// answering. The server is restarted on next use.
type UnavailableError struct {
	Server string
	Err    error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("MCP server %q is unavailable: %v", e.Server, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }
