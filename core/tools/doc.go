// Package tools implements core.ToolHost over MCP servers with mcp-go: one
// toolset per configured server, reached over stdio (a child process),
// streamable HTTP, or in-process.
//
// # Connections
//
// New only checks the configuration. A server is connected on first use
// (Tools or Call): started, initialized as client "opsgate", and its tools
// listed and cached until the server says the list changed. A server that
// cannot start, or that fails or dies later, gives *core.UnavailableError;
// its client is discarded (the child process stopped and reaped) and a new
// one is started on the next use. For a stdio server the error carries the
// tail of the child's stderr, which is usually what says why it failed.
// A child gets its configured env and a few basics (PATH, HOME, locale,
// proxies, KUBECONFIG), not opsgate's environment and its secrets. Close
// stops everything, including what a child started in its process group.
//
// # Tools and risk
//
// A tool's risk comes from its MCP annotations, which are self-declared by
// the server: readOnlyHint true is core.RiskRead (it wins over
// destructiveHint, which the spec gives meaning only for a tool that is not
// read-only), destructiveHint true is core.RiskDestructive, and anything
// else, missing annotations included, is core.RiskWrite.
//
// A server's entry may override that (Annotations, the annotations key of
// tools.servers): a read glob makes a tool a read only when its server
// claims nothing (no readOnlyHint, no destructiveHint true), so a server
// that says a tool writes is never overruled and no configuration takes
// the approval off it; Refusals names the tools a read glob matched in
// vain. A destructive glob raises any tool. Each core.Tool says where its
// risk came from (RiskSource), and the audit records it.
//
// The model-facing name is the server's tool name made valid for OpenAI
// function names (^[a-zA-Z0-9_-]{1,64}$, other characters become '_').
// When that name is already taken by another tool, or is one of opsgate's
// own tool names (load_toolset, memory_*), it is prefixed with
// "<toolset>_" (and, should that be taken too, "mcp_<toolset>_" plus a
// number). The first tool to claim a name keeps it, and a name once given
// stays with its tool for the life of the Host, so names never change
// under a conversation when another server connects later. Calls always
// go out under the server's own name (core.Tool.Remote).
//
// # What the model sees
//
// Every offered tool's description and input schema go with every model
// call, so they are sent compacted: whitespace collapsed, a tool
// description cut to 1,024 characters (at a sentence end when one is near),
// each description inside the schema cut to its first sentence and at most
// 64 characters at a word boundary, and "$schema", "$comment", redundant
// titles and an empty "required" dropped. Every constraint stays (types,
// enums, required, bounds, patterns, formats, defaults, $ref). The server's
// full schema is kept by the Host for validation.
//
// # Validation and calls
//
// Validate checks arguments against the full input schema the tool's
// server listed (compiled once, never fetching remote references), not
// against the compacted core.Tool.InputSchema, which is used only for a
// tool no server listed; its error text tells the model what to fix. A failure of the tool itself, including a JSON-RPC error for the
// call and a call that outlives the call timeout, is a core.ToolResult with
// IsError. Call returns a Go error only when the server is unavailable
// (*core.UnavailableError), ctx ended, the toolset is unknown or the Host
// is closed.
//
// # Call timeouts
//
// Each call is bounded by its server's CallTimeout, else the Host's
// (WithCallTimeout, tools.call_timeout in the configuration). At the bound
// the request's context ends, which cancels it on the server: mcp-go sends
// notifications/cancelled over stdio and ends the request's stream over
// HTTP, and drops a late answer. The connection stays in use. The result
// says the call "timed out after" the bound; for a tool that may change
// things it adds that the outcome is unknown, since the server may have
// acted before the cancel reached it.
package tools
