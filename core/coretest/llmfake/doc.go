// Package llmfake is an OpenAI-compatible Chat Completions server for tests
// and benchmarks. It answers POST /v1/chat/completions with scripted replies
// streamed exactly as OpenAI streams them (server-sent events, one token per
// chunk, tool-call arguments split across chunks, a usage chunk with no
// choices, then [DONE]), and GET /v1/models with a one-model list.
//
// A test scripts replies with [Server.Push] (a queue; each chat request
// consumes one) or [Server.SetResponder], and inspects what the client sent
// with [Server.Requests]. A request with nothing scripted for it gets an HTTP
// 500, so a test that runs out of replies fails loudly instead of hanging.
// A reply may also script what broken deployments do: an error status, an
// HTML page from a proxy, a server that never answers or one that goes
// silent after the headers or mid-answer.
//
// The server is honest rather than lenient: like OpenAI it rejects a
// transcript whose tool messages do not answer the preceding assistant
// message's tool calls (HTTP 400), so engine bugs in windowing show up here.
package llmfake
