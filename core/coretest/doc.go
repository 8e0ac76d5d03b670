// Package coretest holds what tests of every opsgate package share: a
// recording EventSender, helpers to wait for events and to check output.
// Its subpackages are honest fakes of the outside world and conformance
// suites:
//
//   - llmfake: an OpenAI-compatible Chat Completions server that streams
//     scripted text and tool calls over SSE and can answer 429/503.
//   - mcpfake: in-process MCP servers (mcp-go) with annotated read, write
//     and destructive tools, servable over streamable HTTP and stdio.
//   - storetest: the conformance suite every core.Store must pass.
//   - enginetest: the core wired as opsgate serve wires it (openai-go
//     against llmfake, mcp-go against mcpfake, SQLite), for the engine's
//     and the adapters' tests.
package coretest
