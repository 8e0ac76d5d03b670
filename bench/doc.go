// Package bench measures opsgate against the performance targets of the
// benchmarks issue (#6) on the in-repo fakes: the OpenAI-compatible SSE
// server (core/coretest/llmfake), the realistic in-process MCP servers
// ([mcpfake.Realistic]: 60 tools in four toolsets shaped like Kubernetes,
// Helm, Argo Rollouts and Jenkins servers), the Telegram Bot API fake
// (adapters/telegram/telegramtest, with Telegram's flood limits turned on
// for figure 4) and the SQLite store in a temporary directory, wired
// exactly as cmd/opsgate wires them (core/llm, core/tools, memory/sqlite,
// adapters/telegram). Figures 4 and 5 build cmd/opsgate and run `opsgate
// serve` as a child process, so that its memory and CPU are its own; the
// fakes stay in the benchmark's process.
//
// # Running
//
// `make bench` runs cmd/opsgate-bench, which measures every figure, prints
// one table (figure, measured, target, pass/miss, note) and writes the same
// as JSON to bench/results.json, in about three minutes on two cores, and
// three more for figure 10, which fills two stores with 100,000 documents,
// two more for figure 11, and one more for figure 13, which starts a
// Kubernetes control plane (-only 2,3,4,5 picks figures; -merge keeps
// the other figures' rows of bench/results.json). Figures 1, 6, 7 and 8
// also have Benchmark functions for `go test -bench`, which report their
// numbers with b.ReportMetric but give no verdict.
//
// # Figures
//
//  1. [EngineOverhead]: a scripted 3-turn conversation (text, tool call,
//     text) through the engine against the same stream consumed directly
//     with openai-go, the tool called directly with mcp-go.
//  2. [FirstPostLatency]: the model's first token to the first
//     sendMessage, minus the first-send debounce, over 160 replies through
//     the engine and the Telegram adapter in process.
//  3. [StreamedReplyCalls]: the Bot API calls of a 200-token reply
//     streamed at 100 tokens/s with a 1 s edit interval.
//  4. [Load]: 1,000 conversations at once on one bot against the fake's
//     budget (30 calls/s, 1 per chat, 429 with retry_after beyond): time
//     for every final against the budget's lower bound, 429s honoured,
//     finals exact and once, peak RSS and CPU of the serve process.
//  5. [Startup]: `opsgate serve` from exec to the adapter's first
//     getUpdates, and its RSS when idle.
//  6. [MessageLatency]: Engine.Handle to the model receiving the request,
//     and the first token event of 20 conversations started at once.
//  7. [ToolSchemaTokens]: the tools array of the first model call with
//     default_toolsets [k8s] against every toolset loaded.
//  8. [LongConversation]: the messages array sent at turns 10, 50 and 100
//     of one conversation with windowing on.
//  9. [Takeover]: kill -9 of the polling one of two replicas on
//     PostgreSQL, to the other polling; [StoreRestart]: PostgreSQL
//     restarted under two replicas while 20 conversations stream, the
//     seconds until every one is answered and the answers shown twice.
//  10. [MemoryRetrieval]: long-term memory search at 10,000 and 100,000
//     documents (the labelled corpus and generated operations notes) on
//     SQLite and PostgreSQL, memory_prepare's added latency per turn, and
//     recall@3 and MRR on the labelled set (memory/testdata).
//  11. [APIStreams]: the HTTP API's SSE streams (GET
//     /api/v1/conversations/{key}/events) on the real engine and
//     httpapi.API: each event of a 500-token run from its emission to the
//     last of 100 HTTP clients having parsed it (and to a single client),
//     the memory of 1,000 idle streams, and figures 2 and 3 re-measured
//     with and without 100 streams following every chat.
//  12. [SideBySide]: a baseline revision (BENCH_BASELINE, -baseline, else
//     the newest tag before HEAD, else round 1's last commit) built from
//     git next to HEAD, both real binaries run alternately on the Telegram
//     path with the scripted model: start-up, message to model, first token
//     to first send, idle RSS and CPU per conversation, each as HEAD's ratio
//     to the baseline.
//  13. [PreviewLatency]: the model's tool call to the approval card's
//     sendMessage through the Telegram adapter, resources_scale through
//     kubernetes-mcp-server on a real control plane (internal/kubetest),
//     with a previewer and without, alternating; and to the edit that
//     brings the preview.
//
// # Reading the numbers
//
// The machine is shared and its timings drift, so every timing target is a
// ratio of two things measured in the same run (alternating rounds, medians)
// or a count (figures 9 and 10, whose targets are absolute times, are
// the exceptions); token figures are counts with the cl100k_base tokenizer
// ([Encoding]), embedded offline. Allocations are process-wide, so they
// include the fake servers' on both sides of a comparison. A figure that
// misses its target says so, with its cause, in its note.
package bench
