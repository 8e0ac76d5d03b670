// Package mcpfake is an honest MCP server for tests: a small "k8s"-like
// toolset built with mcp-go's server package, servable in-process, over
// streamable HTTP and over stdio, that records every call reaching a tool.
//
// # Tools
//
// The fixture's tools cover every approval class opsgate distinguishes:
//
//   - get_pods(namespace) and get_logs(pod, tail) are read-only
//     (readOnlyHint true, destructiveHint false). get_pods with namespace
//     "missing" returns a tool error result (isError), as a real server
//     does for a namespace that does not exist.
//   - scale_deployment(name, replicas >= 0) writes (readOnlyHint false,
//     destructiveHint false).
//   - delete_namespace(namespace) is destructive (destructiveHint true).
//   - restart_pod(pod) carries no annotations at all, like many third-party
//     servers; a client must treat it as a write.
//   - slow_check(seconds) is read-only, sends progress notifications every
//     50 ms when the call carries a progress token, and blocks until the
//     seconds pass or the request is cancelled. A cancelled call is recorded
//     with Cancelled set.
//   - hang() is read-only and never returns on its own: it blocks until the
//     request is cancelled (a client's timeout or stop), and is then
//     recorded with Cancelled set.
//
// Every result is deterministic text naming the arguments, e.g. "scaled
// deployment web to 3 replicas".
//
// Read-only tools set destructiveHint false explicitly: mcp.NewTool presets
// destructiveHint true, and opsgate classifies a tool that claims both as
// destructive.
//
// # Serving over stdio
//
// A test binary can act as a stdio MCP server by re-executing itself. Call
// MaybeServeStdio first thing in TestMain:
//
//	func TestMain(m *testing.M) {
//		mcpfake.MaybeServeStdio()
//		os.Exit(m.Run())
//	}
//
// and configure the server with the command, arguments and environment
// StdioChild returns: os.Args[0], ["-test.run=^$"] (a binary lacking that
// TestMain then runs no tests instead of recursing) and {EnvStdio: "1"}
// plus GORACE=atexit_sleep_ms=0, without which each stopped -race child
// costs a second. Pass every variable the child needs to StdioChild:
// core/tools does not hand a child opsgate's environment.
//
// The child serves a fresh fixture on stdin/stdout and exits when stdin
// closes. EnvPIDFile makes it write its process id to a file (so a test can
// kill it); EnvFail makes it print the variable's value on stderr and exit
// 1 before serving (a server that fails to start); EnvLegacy makes it
// refuse the 2026-07-28 server/discover probe, as older servers do. Calls
// are recorded in the child, so Calls is of no use there: assert on results.
package mcpfake
