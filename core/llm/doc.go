// Package llm implements core.Model over any OpenAI-compatible Chat
// Completions endpoint (OpenAI, Ollama, vLLM, LiteLLM, llama.cpp) with
// github.com/openai/openai-go/v3.
//
// A [Client] streams every call. Text and reasoning fragments go to the
// caller's onDelta as they arrive; reasoning is read from the
// reasoning_content or reasoning field that DeepSeek, vLLM and Ollama add to
// the delta. Tool calls are reassembled from their argument fragments by
// index, and usage (with cached prompt tokens) is read from whichever chunk
// carries it.
//
// The client never retries: the engine owns retries and reports each one.
// Failures come back as *core.ModelError, classified from the raw HTTP
// response rather than the library's error type, because servers disagree
// on the shape of error bodies (OpenAI {"error":{"message":…}}, Ollama
// {"error":"…"}, vLLM {"message":…}, proxies HTML). Their messages end with
// the setting to check. A server that goes quiet, before its first chunk
// (RequestTimeout) or between two (StreamIdleTimeout), ends the attempt
// instead of holding the run forever.
//
// The client does not read OPENAI_* environment variables: configuration
// resolves those fallbacks, so what is configured is what is used.
package llm
