package llmfake

import "time"

// Reply is what the server answers to one chat request.
//
// Streaming order: a role chunk, Thinking (as delta.reasoning_content) word
// by word, Text word by word, each tool call (a header chunk with id and
// name, then the arguments in at least three fragments), a chunk with the
// finish_reason, a usage chunk when the client asked for one, [DONE].
type Reply struct {
	// Text is streamed as several chunks, split on word boundaries (a word
	// with its leading white space per chunk, roughly one token).
	Text string
	// SplitChars, when above 0, streams Text in chunks of alternately 1 and
	// SplitChars characters instead of by word, as a tokenizer cuts keys
	// and hashes: a secret then arrives over many chunks.
	SplitChars int
	// IgnoreStream answers a streamed request with one whole JSON
	// completion, as servers and proxies that ignore stream: true do.
	IgnoreStream bool
	// Thinking is streamed as delta.reasoning_content before Text.
	Thinking string
	// ThinkingField, when set, names the delta field that carries Thinking
	// instead: "reasoning" is what Ollama and OpenRouter send.
	ThinkingField string
	// ToolCalls are streamed after Text, one after another, with their
	// index. An empty ID is sent as no id at all, as some local servers do.
	ToolCalls []ToolCall

	// Status, when not 0, answers this HTTP status with an OpenAI-style JSON
	// error body ({"error":{"message":…}}) instead of streaming.
	Status int
	// RetryAfter is sent as the Retry-After header with Status.
	RetryAfter string
	// ErrorMessage is the error message for Status and MidStreamError's
	// default; http.StatusText(Status) when empty.
	ErrorMessage string
	// ErrorCode is sent as error.code with Status, as OpenAI sends
	// "model_not_found" or "invalid_api_key"; null when empty.
	ErrorCode string
	// HTML, when set, is the whole answer: this page as text/html with
	// Status (200 when 0), which is what a reverse proxy, a login portal or
	// a web UI in front of the model sends instead of the API.
	HTML string

	// NeverAnswer accepts the request and sends nothing, not even the
	// response headers, until the client goes away or the server closes: a
	// wedged model server or a proxy queueing forever.
	NeverAnswer bool
	// StallAfterHeaders sends the 200 and the event-stream headers, then
	// nothing until the client goes away or the server closes.
	StallAfterHeaders bool
	// StallAfterTokens, when above 0, goes silent after that many token
	// chunks (text, thinking or tool-call fragments) until the client goes
	// away or the server closes: a model server that hangs mid-answer. A
	// reply with fewer token chunks is streamed whole.
	StallAfterTokens int

	// FirstTokenDelay is waited after the response headers, before the
	// first chunk.
	FirstTokenDelay time.Duration
	// TokenDelay is waited between chunks.
	TokenDelay time.Duration

	// Usage is sent in the final usage chunk when the request asked for it
	// (stream_options.include_usage). When nil, an estimate is sent: about
	// one prompt token per four characters of the request's messages and one
	// completion token per streamed fragment.
	Usage *Usage

	// Garbage streams a chunk of invalid JSON after the first text chunk.
	Garbage bool
	// MidStreamError sends `data: {"error":{"message":MidStreamError,…}}`
	// after about half of the text chunks (at least one) and ends the stream
	// without [DONE].
	MidStreamError string
	// Hold, when not nil, blocks the stream after its first token chunk
	// (text, thinking or tool-call fragment; the role chunk when there is
	// none) until Hold is closed, the client goes away or the server closes.
	Hold <-chan struct{}
}

// ToolCall is a scripted tool call. Arguments is sent verbatim, so it may be
// invalid JSON on purpose.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Usage is token accounting for the usage chunk.
type Usage struct {
	Prompt     int
	Completion int
	// Cached is sent as prompt_tokens_details.cached_tokens.
	Cached int
}
