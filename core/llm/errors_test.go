package llm_test

import (
	"cmp"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/llm"
)

func TestGenerateRateLimited(t *testing.T) {
	fake := llmfake.New(t)
	fake.Push(llmfake.Reply{Status: 429, RetryAfter: "7", ErrorMessage: "Rate limit reached for gpt-4o-mini"})
	c := newClient(t, fake, llm.Config{})

	_, _, err := generate(t, c, userRequest("hi"))
	me := modelError(t, err, core.ModelRateLimited)
	if me.RetryAfter != 7*time.Second || me.StatusCode != 429 {
		t.Errorf("retry after %v, status %d; want 7s, 429", me.RetryAfter, me.StatusCode)
	}
	if !strings.Contains(me.Message, "Rate limit reached") {
		t.Errorf("message %q lacks the server's message", me.Message)
	}
	// The engine retries; the library must not.
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("%d requests sent, want 1 (library retries must be off)", n)
	}
}

func TestGenerateTransientStatus(t *testing.T) {
	for _, status := range []int{408, 500, 502, 503, 504} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			fake := llmfake.New(t)
			fake.Push(llmfake.Reply{Status: status})
			c := newClient(t, fake, llm.Config{})
			_, _, err := generate(t, c, userRequest("hi"))
			me := modelError(t, err, core.ModelTransient)
			if me.StatusCode != status {
				t.Errorf("status = %d, want %d", me.StatusCode, status)
			}
			if n := len(fake.Requests()); n != 1 {
				t.Errorf("%d requests sent, want 1", n)
			}
		})
	}
}

func TestGenerateFatalStatus(t *testing.T) {
	tests := []struct {
		status int
		msg    string
	}{
		{400, "Invalid 'messages[1].content': string too long"},
		{401, "Incorrect API key provided: sk-abc***xyz"},
		{403, "Project does not have access to model gpt-5"},
		{404, `model "qwen3:8b" not found, try pulling it first`},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			fake := llmfake.New(t)
			fake.Push(llmfake.Reply{Status: tt.status, ErrorMessage: tt.msg})
			c := newClient(t, fake, llm.Config{})
			_, _, err := generate(t, c, userRequest("hi"))
			me := modelError(t, err, core.ModelFatal)
			// The server's message comes first; advice may follow.
			if !strings.HasPrefix(me.Message, tt.msg) || me.StatusCode != tt.status {
				t.Errorf("got %d %q, want %d %q…", me.StatusCode, me.Message, tt.status, tt.msg)
			}
		})
	}
}

func TestGenerateGarbageStream(t *testing.T) {
	fake := llmfake.New(t)
	fake.Push(llmfake.Reply{Text: "Looking at the pods now", Garbage: true})
	c := newClient(t, fake, llm.Config{})

	_, _, err := generate(t, c, userRequest("hi"))
	me := modelError(t, err, core.ModelFatal)
	if !strings.Contains(me.Message, "not valid JSON") {
		t.Errorf("message %q should say the stream was not JSON", me.Message)
	}
}

func TestGenerateMidStreamError(t *testing.T) {
	fake := llmfake.New(t)
	fake.Push(llmfake.Reply{Text: "The deployment web has three replicas", MidStreamError: "The server had an error while processing your request."})
	c := newClient(t, fake, llm.Config{})

	_, rec, err := generate(t, c, userRequest("hi"))
	me := modelError(t, err, core.ModelFatal)
	if !strings.Contains(me.Message, "The server had an error while processing your request.") {
		t.Errorf("message %q lacks the server's message", me.Message)
	}
	if len(rec.deltas) == 0 {
		t.Errorf("the text before the error was not streamed")
	}
}

func TestGenerateStopDuringHold(t *testing.T) {
	fake := llmfake.New(t)
	hold := make(chan struct{}) // never closed: the server streams one token, then waits
	fake.Push(llmfake.Reply{Text: "Restarting the deployment now", Hold: hold})
	c := newClient(t, fake, llm.Config{})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	firstToken := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := c.Generate(ctx, userRequest("restart web"), func(d core.Delta) {
			select {
			case <-firstToken:
			default:
				close(firstToken)
			}
		})
		done <- err
	}()
	select {
	case <-firstToken:
	case <-time.After(10 * time.Second):
		t.Fatal("no token streamed")
	}
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Generate did not return within 1 s of cancellation")
	}
}

func TestGenerateRequestTimeout(t *testing.T) {
	tests := []struct {
		name  string
		reply llmfake.Reply
	}{
		{"no headers", llmfake.Reply{Text: "never", NeverAnswer: true}},
		{"headers, then nothing", llmfake.Reply{Text: "never", StallAfterHeaders: true}},
		{"headers, then a late first chunk", llmfake.Reply{Text: "late", FirstTokenDelay: time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := llmfake.New(t)
			fake.Push(tt.reply)
			c := newClient(t, fake, llm.Config{RequestTimeout: 100 * time.Millisecond, StreamIdleTimeout: time.Hour})
			_, _, err := generate(t, c, userRequest("hi"))
			me := modelError(t, err, core.ModelTransient)
			want := "the model server at " + fake.URL + " sent no answer within 100ms (llm.timeout): check that it is up and not overloaded, " +
				"or raise llm.timeout for a model that is slow to start"
			if me.Message != want {
				t.Errorf("message %q\nwant    %q", me.Message, want)
			}
		})
	}
}

func TestGenerateStreamIdleTimeout(t *testing.T) {
	t.Run("after three tokens", func(t *testing.T) {
		fake := llmfake.New(t)
		fake.Push(llmfake.Reply{Text: "Scaling web to five replicas", StallAfterTokens: 3})
		c := newClient(t, fake, llm.Config{RequestTimeout: time.Hour, StreamIdleTimeout: 100 * time.Millisecond})
		resp, rec, err := generate(t, c, userRequest("scale web"))
		// The user saw part of an answer: not retried, and not an answer.
		me := modelError(t, err, core.ModelFatal)
		want := "the model stream went silent for 100ms (llm.stream_idle_timeout) after 3 tokens; the answer is incomplete: " +
			"check that the model server at " + fake.URL + " is not overloaded"
		if me.Message != want {
			t.Errorf("message %q\nwant    %q", me.Message, want)
		}
		if text, _ := rec.text(); text != "Scaling web to " {
			t.Errorf("streamed %q, want the three tokens sent", text)
		}
		if resp.Message.Content != "" || resp.FinishReason != "" {
			t.Errorf("a stalled stream returned an answer: %+v", resp)
		}
	})
	t.Run("before the first token", func(t *testing.T) {
		fake := llmfake.New(t)
		// Without tokens the reply holds right after its role chunk.
		fake.Push(llmfake.Reply{Hold: make(chan struct{})})
		c := newClient(t, fake, llm.Config{RequestTimeout: time.Hour, StreamIdleTimeout: 100 * time.Millisecond})
		_, _, err := generate(t, c, userRequest("hi"))
		me := modelError(t, err, core.ModelTransient)
		if !strings.HasPrefix(me.Message, "the model stream went silent for 100ms (llm.stream_idle_timeout) after 0 tokens: ") {
			t.Errorf("message %q", me.Message)
		}
	})
}

func TestGenerateTimeoutsDoNotCutASteadyStream(t *testing.T) {
	fake := llmfake.New(t)
	text := strings.Repeat("word ", 12)
	fake.Push(llmfake.Reply{Text: text, TokenDelay: 100 * time.Millisecond})
	// The stream lasts well over a second; only its start and its gaps are bounded.
	c := newClient(t, fake, llm.Config{RequestTimeout: 500 * time.Millisecond, StreamIdleTimeout: 500 * time.Millisecond})

	resp, _, err := generate(t, c, userRequest("hi"))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Message.Content != text {
		t.Errorf("content = %q", resp.Message.Content)
	}
}

func TestGenerateStopPreemptsTimeouts(t *testing.T) {
	tests := []struct {
		name   string
		reply  llmfake.Reply
		tokens int // streamed before the silence
	}{
		{"waiting for an answer", llmfake.Reply{Text: "never", NeverAnswer: true}, 0},
		{"waiting for the next chunk", llmfake.Reply{Text: "Scaling web to five replicas", StallAfterTokens: 3}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := llmfake.New(t)
			fake.Push(tt.reply)
			c := newClient(t, fake, llm.Config{RequestTimeout: time.Hour, StreamIdleTimeout: time.Hour})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			silent := make(chan struct{})
			if tt.tokens == 0 {
				go func() { fake.WaitRequests(1, 10*time.Second); close(silent) }()
			}
			done := make(chan error, 1)
			go func() {
				n := 0
				_, err := c.Generate(ctx, userRequest("hi"), func(core.Delta) {
					if n++; n == tt.tokens {
						close(silent)
					}
				})
				done <- err
			}()
			select {
			case <-silent:
			case <-time.After(10 * time.Second):
				t.Fatal("the server did not reach its silence")
			}
			cancel()
			select {
			case err := <-done:
				if err != context.Canceled {
					t.Errorf("err = %v, want context.Canceled", err)
				}
			case <-time.After(time.Second):
				t.Fatal("Generate did not return within 1 s of cancellation")
			}
		})
	}
}

func TestGenerateConnectionRefused(t *testing.T) {
	c, err := llm.New(llm.Config{BaseURL: "http://" + closedAddr(t) + "/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = generate(t, c, userRequest("hi"))
	me := modelError(t, err, core.ModelTransient)
	if !strings.Contains(me.Message, "refused") {
		t.Errorf("message %q should say the connection was refused", me.Message)
	}
}

func TestGenerateStreamCutOff(t *testing.T) {
	t.Run("after output", func(t *testing.T) {
		fake := llmfake.New(t)
		fake.Push(llmfake.Reply{Text: "Scaling web to", Hold: make(chan struct{})})
		c := newClient(t, fake, llm.Config{})
		// Closing the server ends the held stream without finish_reason or [DONE].
		var once sync.Once
		_, err := c.Generate(context.Background(), userRequest("scale"), func(core.Delta) { once.Do(func() { go fake.Close() }) })
		modelError(t, err, core.ModelFatal)
	})
	t.Run("before output", func(t *testing.T) {
		fake := llmfake.New(t)
		fake.Push(llmfake.Reply{Text: "late", FirstTokenDelay: time.Minute})
		c := newClient(t, fake, llm.Config{})
		go func() {
			fake.WaitRequests(1, 10*time.Second)
			fake.Close()
		}()
		_, _, err := generate(t, c, userRequest("hi"))
		modelError(t, err, core.ModelTransient)
	})
}

// closedAddr returns a local address nobody listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestGenerateErrorsSayWhatToCheck: issue 9, model error texts say which
// setting to check.
func TestGenerateErrorsSayWhatToCheck(t *testing.T) {
	const login = `<!DOCTYPE html><html><head><title>Sign in - Corp SSO</title></head><body><form>…</form></body></html>`
	const badGateway = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
	tests := []struct {
		name   string
		reply  llmfake.Reply
		cfg    llm.Config
		noV1   bool // the base URL lacks /v1
		kind   core.ModelErrorKind
		status int
		want   string // with {base} for the base URL
		notAPI bool
	}{
		{name: "401 names the key's origin",
			reply: llmfake.Reply{Status: 401, ErrorCode: "invalid_api_key", ErrorMessage: "Incorrect API key provided: sk-wro***ong."},
			cfg:   llm.Config{APIKey: "sk-wrong", APIKeyOrigin: "set by OPENAI_API_KEY"},
			kind:  core.ModelFatal, status: 401,
			want: "Incorrect API key provided: sk-wro***ong. Check llm.api_key (set by OPENAI_API_KEY)"},
		{name: "401 without a key says none was sent",
			reply: llmfake.Reply{Status: 401, ErrorMessage: "Unauthorized"},
			cfg:   llm.Config{APIKeyOrigin: "OPENAI_API_KEY is only sent to OpenAI or to OPENAI_BASE_URL"},
			kind:  core.ModelFatal, status: 401,
			want: "Unauthorized: no API key was sent: set llm.api_key (OPENAI_API_KEY is only sent to OpenAI or to OPENAI_BASE_URL)"},
		{name: "403 names the key and the model",
			reply: llmfake.Reply{Status: 403, ErrorMessage: "Project does not have access to model gpt-5"},
			cfg:   llm.Config{APIKey: "sk-proj", Model: "gpt-5", APIKeyOrigin: "set in opsgate.yaml"},
			kind:  core.ModelFatal, status: 403,
			want: `Project does not have access to model gpt-5: check llm.api_key (set in opsgate.yaml), and that it may use llm.model ("gpt-5")`},
		{name: "404 model not found names llm.model",
			reply: llmfake.Reply{Status: 404, ErrorCode: "model_not_found", ErrorMessage: "The model `gpt-9` does not exist or you do not have access to it."},
			cfg:   llm.Config{Model: "gpt-9"},
			kind:  core.ModelFatal, status: 404,
			want: "The model `gpt-9` does not exist or you do not have access to it. " +
				`Check llm.model ("gpt-9"): it must be a model this endpoint serves (GET {base}/models lists them)`},
		{name: "404 path names llm.base_url",
			noV1: true,
			kind: core.ModelFatal, status: 404,
			want: "llmfake: no route for POST /api/chat/completions: check llm.base_url ({base}): it usually ends in /v1"},
		{name: "HTML 200 is not the API",
			reply: llmfake.Reply{HTML: login},
			kind:  core.ModelFatal, status: 200, notAPI: true,
			want: `the endpoint answered with an HTML page (text/html, "Sign in - Corp SSO"), not the OpenAI API: check llm.base_url and any proxy in between`},
		{name: "a whole JSON answer to a streamed request",
			reply: llmfake.Reply{Text: "hello", IgnoreStream: true},
			kind:  core.ModelFatal, status: 200, notAPI: true,
			want: "the endpoint answered with one whole JSON document (application/json), not an event stream: it ignored stream: true; " +
				"check llm.base_url, and that any proxy in between passes server-sent events through"},
		{name: "HTML 502 is a proxy's error page",
			reply: llmfake.Reply{Status: 502, HTML: badGateway},
			kind:  core.ModelTransient, status: 502, notAPI: true,
			want: `the endpoint answered with an HTML page (text/html, "502 Bad Gateway"), not the OpenAI API: ` +
				"a proxy in between could not get an answer from the model server behind it; check that server, and llm.base_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := llmfake.New(t)
			fake.Push(tt.reply)
			cfg := tt.cfg
			if tt.noV1 {
				cfg.BaseURL = strings.TrimSuffix(fake.URL, "/v1") + "/api"
			}
			c := newClient(t, fake, cfg)
			base := cmp.Or(cfg.BaseURL, fake.URL)
			_, _, err := generate(t, c, userRequest("hi"))
			me := modelError(t, err, tt.kind)
			if want := strings.ReplaceAll(tt.want, "{base}", base); me.Message != want || me.StatusCode != tt.status {
				t.Errorf("got  %d %q\nwant %d %q", me.StatusCode, me.Message, tt.status, want)
			}
			if errors.Is(err, llm.ErrNotOpenAIAPI) != tt.notAPI {
				t.Errorf("errors.Is(err, ErrNotOpenAIAPI) = %v, want %v", !tt.notAPI, tt.notAPI)
			}
		})
	}
}
