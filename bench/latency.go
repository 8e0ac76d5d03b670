package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// Figure 6 targets and the model the burst runs against.
const (
	toModelP99Max   = 50 * time.Millisecond
	firstTextP50Max = time.Second
	burstSize       = 20
	burstFirstToken = 100 * time.Millisecond
	burstTokenDelay = 10 * time.Millisecond
)

// firstTokens is an EventSender that notes when each conversation's first
// token event arrives: the first text a chat adapter could show.
type firstTokens struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (f *firstTokens) Send(_ context.Context, ev core.Event) error {
	if ev.Type != core.EventToken {
		return nil
	}
	now := time.Now()
	f.mu.Lock()
	if _, ok := f.at[ev.ConvKey]; !ok {
		f.at[ev.ConvKey] = now
	}
	f.mu.Unlock()
	return nil
}

func (f *firstTokens) get(conv string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.at[conv]
	return t, ok
}

// latencyStack is a stack whose model answers every request with a short
// text after delay, and which tells when each request arrived.
type latencyStack struct {
	*stack
	first *firstTokens
	sent  int // messages sent by messageToModel, for unique texts
}

func newLatencyStack(firstToken, tokenDelay time.Duration) (*latencyStack, error) {
	ft := &firstTokens{at: map[string]time.Time{}}
	s, err := newStack(stackConfig{sender: ft})
	if err != nil {
		return nil, err
	}
	s.llm.SetResponder(func(llmfake.Request) llmfake.Reply {
		return llmfake.Reply{
			Text:            "The checkout pods look healthy; two of three are Running and one is restarting after an upstream timeout.",
			FirstTokenDelay: firstToken, TokenDelay: tokenDelay,
		}
	})
	// The first call connects the MCP server; a deployment has done that
	// long before its first incident.
	if err := s.say(context.Background(), "warmup", "hello"); err != nil {
		s.close()
		return nil, err
	}
	return &latencyStack{stack: s, first: ft}, nil
}

// arrivals maps the newest user message of each request from the from-th
// on to when the request reached the model.
func (s *latencyStack) arrivals(from int) map[string]time.Time {
	out := map[string]time.Time{}
	for _, r := range s.llm.Requests()[from:] {
		if _, seen := out[lastUser(r)]; !seen {
			out[lastUser(r)] = r.Received
		}
	}
	return out
}

// messageToModel sends n messages one after another, alternating a new
// conversation and a second turn of the previous one (which has history to
// load), and returns for each the time from Handle to the model receiving
// the request.
func messageToModel(ctx context.Context, s *latencyStack, n int) ([]time.Duration, error) {
	sent := make(map[string]time.Time, n)
	from := len(s.llm.Requests())
	for range n {
		conv := fmt.Sprintf("m2m:%d", s.sent/2)
		text := fmt.Sprintf("message %d: is checkout healthy?", s.sent)
		s.sent++
		sent[text] = time.Now()
		if err := s.say(ctx, conv, text); err != nil {
			return nil, err
		}
	}
	return since(sent, s.arrivals(from))
}

// burst starts size new conversations at once and returns, for each, the
// time to its first token event and the time until its request reached
// the model.
func burst(ctx context.Context, s *latencyStack, round, size int) (firstText, toModel []time.Duration, err error) {
	from := len(s.llm.Requests())
	start := make(chan struct{})
	convs, texts := make([]string, size), make([]string, size)
	sent := make([]time.Time, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for j := range size {
		convs[j] = fmt.Sprintf("burst:%d:%d", round, j)
		texts[j] = fmt.Sprintf("burst %d/%d: checkout is down, what is going on?", round, j)
		wg.Go(func() {
			<-start
			sent[j] = time.Now()
			errs[j] = s.handle(ctx, convs[j], texts[j])
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	if err := s.engine.Wait(ctx); err != nil {
		return nil, nil, err
	}
	arr := s.arrivals(from)
	for j, c := range convs {
		at, ok := s.first.get(c)
		if !ok {
			return nil, nil, fmt.Errorf("bench: %s showed no text", c)
		}
		firstText = append(firstText, at.Sub(sent[j]))
		if at, ok = arr[texts[j]]; !ok {
			return nil, nil, fmt.Errorf("bench: %s never reached the model", c)
		}
		toModel = append(toModel, at.Sub(sent[j]))
	}
	return firstText, toModel, nil
}

func since(sent, arrived map[string]time.Time) ([]time.Duration, error) {
	out := make([]time.Duration, 0, len(sent))
	for text, t0 := range sent {
		at, ok := arrived[text]
		if !ok {
			return nil, fmt.Errorf("bench: %q never reached the model", text)
		}
		out = append(out, at.Sub(t0))
	}
	return out, nil
}

// MessageLatency is figure 6: the time from a user message reaching the
// engine (Engine.Handle, where an adapter hands it over) to its request
// reaching the model, over sequential messages; and for bursts of 20 new
// conversations at once against a model whose first token takes 100 ms,
// the time to the first token event reaching the EventSender.
func MessageLatency(ctx context.Context, samples, bursts int) ([]Row, error) {
	seqStack, err := newLatencyStack(0, 0)
	if err != nil {
		return nil, err
	}
	seq, err := messageToModel(ctx, seqStack, samples)
	seqStack.close()
	if err != nil {
		return nil, err
	}
	bs, err := newLatencyStack(burstFirstToken, burstTokenDelay)
	if err != nil {
		return nil, err
	}
	defer bs.close()
	var first, toModel []time.Duration
	for r := range bursts {
		f, m, err := burst(ctx, bs, r, burstSize)
		if err != nil {
			return nil, err
		}
		first, toModel = append(first, f...), append(toModel, m...)
	}
	p99, fp50 := percentile(seq, 99), percentile(first, 50)
	return []Row{
		{
			Figure:   "6. message -> model request",
			Measured: fmt.Sprintf("p50 %.1f ms, p99 %.1f ms, max %.1f ms (n=%d)", ms(percentile(seq, 50)), ms(p99), ms(percentile(seq, 100)), len(seq)),
			Target:   fmt.Sprintf("p99 <= %d ms", toModelP99Max.Milliseconds()),
			Result:   verdict(p99 <= toModelP99Max),
			Note: fmt.Sprintf("from Engine.Handle to llmfake receiving the HTTP request; half new conversations, half second turns; "+
				"under a burst of %d: p50 %.1f ms, p99 %.1f ms", burstSize, ms(percentile(toModel, 50)), ms(percentile(toModel, 99))),
			Metrics: map[string]float64{
				"p50_ms": ms(percentile(seq, 50)), "p99_ms": ms(p99), "max_ms": ms(percentile(seq, 100)),
				"burst_p50_ms": ms(percentile(toModel, 50)), "burst_p99_ms": ms(percentile(toModel, 99)),
			},
		},
		{
			Figure:   fmt.Sprintf("6. first visible text, %d new conversations at once", burstSize),
			Measured: fmt.Sprintf("p50 %.0f ms, p99 %.0f ms (n=%d, model first token %d ms)", ms(fp50), ms(percentile(first, 99)), len(first), burstFirstToken.Milliseconds()),
			Target:   fmt.Sprintf("p50 <= %d ms", firstTextP50Max.Milliseconds()),
			Result:   verdict(fp50 <= firstTextP50Max),
			Note: "from Engine.Handle to the first token event reaching the EventSender (a recorder); " +
				"no chat adapter is in the path yet, so a platform's first post comes on top",
			Metrics: map[string]float64{"p50_ms": ms(fp50), "p99_ms": ms(percentile(first, 99)), "model_first_token_ms": ms(burstFirstToken)},
		},
	}, nil
}
