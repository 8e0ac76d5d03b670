package llm_test

import (
	"context"
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
			if me.Message != tt.msg || me.StatusCode != tt.status {
				t.Errorf("got %d %q, want %d %q", me.StatusCode, me.Message, tt.status, tt.msg)
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

func TestGenerateRequestTimeoutBeforeFirstChunk(t *testing.T) {
	fake := llmfake.New(t)
	fake.Push(llmfake.Reply{Text: "late", FirstTokenDelay: time.Minute})
	c := newClient(t, fake, llm.Config{RequestTimeout: 100 * time.Millisecond})

	start := time.Now()
	_, _, err := generate(t, c, userRequest("hi"))
	modelError(t, err, core.ModelTransient)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestGenerateRequestTimeoutDoesNotCutStream(t *testing.T) {
	fake := llmfake.New(t)
	text := strings.Repeat("word ", 12)
	fake.Push(llmfake.Reply{Text: text, TokenDelay: 100 * time.Millisecond})
	// The stream lasts well over a second; only its start is bounded.
	c := newClient(t, fake, llm.Config{RequestTimeout: 500 * time.Millisecond})

	resp, _, err := generate(t, c, userRequest("hi"))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Message.Content != text {
		t.Errorf("content = %q", resp.Message.Content)
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
