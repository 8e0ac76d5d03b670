// Package bench measures opsgate against the performance targets of the
// benchmarks issue (#6). Everything runs in one process on the in-repo
// fakes: the OpenAI-compatible SSE server (core/coretest/llmfake), the
// realistic in-process MCP servers ([mcpfake.Realistic]: 60 tools in four
// toolsets shaped like Kubernetes, Helm, Argo Rollouts and Jenkins servers)
// and the SQLite store in a temporary directory, wired exactly as
// cmd/opsgate wires them (core/llm, core/tools, memory/sqlite).
//
// # Running
//
// `make bench` runs cmd/opsgate-bench, which measures every figure, prints
// one table (figure, measured, target, pass/miss, note) and writes the same
// as JSON to bench/results.json, in well under a minute on two cores. Each
// figure also has a Benchmark function for `go test -bench`, which reports
// its numbers with b.ReportMetric but gives no verdict.
//
// # Figures
//
//  1. [EngineOverhead]: a scripted 3-turn conversation (text, tool call,
//     text) through the engine against the same stream consumed directly
//     with openai-go, the tool called directly with mcp-go.
//  6. [MessageLatency]: Engine.Handle to the model receiving the request,
//     and the first token event of 20 conversations started at once.
//  7. [ToolSchemaTokens]: the tools array of the first model call with
//     default_toolsets [k8s] against every toolset loaded.
//  8. [LongConversation]: the messages array sent at turns 10, 50 and 100
//     of one conversation with windowing on.
//
// # Reading the numbers
//
// The machine is shared and its timings drift, so every timing target is a
// ratio of two things measured in the same run (alternating rounds, medians)
// or a count; token figures are counts with the cl100k_base tokenizer
// ([Encoding]), embedded offline. Allocations are process-wide, so they
// include the fake servers' on both sides of a comparison. A figure that
// misses its target says so, with its cause, in its note.
package bench
