// Package metrics is opsgate's Prometheus instrumentation. Only
// cmd/opsgate wires it; core knows nothing of it and stays standard
// library only.
//
// Three kinds of sources feed it:
//
//   - the engine's events, observed on their way to the adapters
//     ([Metrics.Sender] tees the engine's one sender): runs, their
//     durations and time to first token, model errors, tool calls and
//     their latency, and approval decisions;
//   - the edges where opsgate meets a platform: each decision attempt an
//     adapter hands to the engine ([Metrics.Decided]) and each call to a
//     platform's API ([Metrics.Transport]), 429s included;
//   - state read at scrape time ([Metrics.Watch]): pending approvals from
//     the store (so the gauge is right across restarts and replicas),
//     adapter connections, MCP server states, active runs, delivery errors.
//
// Every name starts with opsgate_, is snake_case and carries its unit
// (_seconds, _total); the README lists them all, and a test in
// cmd/opsgate reads that list and checks each one is exported and moves.
package metrics
