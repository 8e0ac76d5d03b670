package bench

import (
	"context"
	"fmt"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// flatMax is figure 8's target: the last measured turn sends at most this
// much more than the middle one.
const flatMax = 1.10

// An incident conversation: questions and answers of realistic length,
// cycled, each stamped with its turn so no two messages are equal.
var (
	questions = []string{
		"checkout is returning 502s for some users in prod. Can you check whether the pods are healthy and what changed in the last hour?",
		"The payments-api latency alert fired again. Is it the same cause as before, or something new? Look at the recent events too.",
		"Can you summarise what we know so far for the incident channel, in three bullet points, with the evidence for each one?",
		"Someone mentioned a deploy around 08:57. Which release went out, and does the timing line up with the first errors we saw?",
	}
	answers = []string{
		"Two of the three checkout pods are Running; checkout-7d4b9c6f5-qs7tn is in CrashLoopBackOff with 14 restarts. Its log shows repeated 502s from payments-api on /v1/charges, then readiness failing and a SIGTERM. So checkout is failing because payments is, not on its own.",
		"It looks like the same cause: payments-api pods are near their memory limit (about 1.7 GiB of 2 GiB) and the events show readiness probes failing with 503. Nothing new was scheduled. I would look at the payments release that went out this morning next.",
		"Summary: 1) checkout crash-loops because payments-api answers 502 (checkout logs). 2) payments-api is close to its memory limit and failing readiness (pods_top, events). 3) payments 2.19.0 was deployed at 08:57, minutes before the first errors (helm history).",
		"payments 2.19.0 (app 1.42.0) was deployed at 08:57:33 as revision 41; the first 502 in checkout's log is at 09:41. That is plausible but not proof. A rollback to revision 40 is the smallest safe change; I can propose it for approval.",
	}
	toolCalls = []llmfake.ToolCall{
		{Name: "pods_list_in_namespace", Arguments: `{"namespace":"prod"}`},
		{Name: "pods_log", Arguments: `{"namespace":"prod","name":"checkout-7d4b9c6f5-qs7tn","tail":50}`},
		{Name: "events_list", Arguments: `{"namespace":"prod"}`},
	}
)

// incidentReply scripts the model of a long conversation: every third turn
// calls a read-only tool first, then every turn answers in text.
func incidentReply(req llmfake.Request) llmfake.Reply {
	var turn int
	var rest string
	fmt.Sscanf(lastUser(req), "Turn %d: %s", &turn, &rest)
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "user" && turn%3 == 0 {
		tc := toolCalls[(turn/3)%len(toolCalls)]
		tc.ID = fmt.Sprintf("call_%d", turn)
		return llmfake.Reply{ToolCalls: []llmfake.ToolCall{tc}}
	}
	return llmfake.Reply{Text: fmt.Sprintf("(turn %d) %s", turn, answers[turn%len(answers)])}
}

// turnTokens is what the first model call of a turn sent.
type turnTokens struct {
	messages    int // messages in the request
	msgTokens   int // tokens of the messages array
	toolsTokens int // tokens of the tools array
}

// converse runs a conversation of turns user turns and returns what the
// first model call of each of the turns in at sent.
func converse(ctx context.Context, turns, window int, at []int) (map[int]turnTokens, error) {
	s, err := newStack(stackConfig{core: core.Config{ContextWindowMessages: window}})
	if err != nil {
		return nil, err
	}
	defer s.close()
	s.llm.SetResponder(incidentReply)
	want := map[int]bool{}
	for _, t := range at {
		want[t] = true
	}
	out := map[int]turnTokens{}
	for turn := 1; turn <= turns; turn++ {
		n := len(s.llm.Requests())
		text := fmt.Sprintf("Turn %d: %s", turn, questions[turn%len(questions)])
		if err := s.say(ctx, "long:1", text); err != nil {
			return nil, err
		}
		if !want[turn] {
			continue
		}
		reqs := s.llm.Requests()
		if len(reqs) <= n {
			return nil, fmt.Errorf("bench: turn %d made no model request", turn)
		}
		b, err := parseBody(reqs[n].Raw)
		if err != nil {
			return nil, err
		}
		var tt turnTokens
		tt.messages = len(reqs[n].Messages)
		if tt.msgTokens, err = countTokens(string(b.Messages)); err != nil {
			return nil, err
		}
		if tt.toolsTokens, err = countTokens(string(b.Tools)); err != nil {
			return nil, err
		}
		out[turn] = tt
	}
	return out, nil
}

// LongConversation is figure 8: the tokens of the messages array sent on
// the first model call of turns 10, 50 and 100 of one conversation, with
// windowing at its default (40 messages); and, for scale, turn 100 without
// windowing. quick shortens the conversation to 12 turns and the window to
// 6 messages (for tests).
func LongConversation(ctx context.Context, quick bool) ([]Row, error) {
	turns, at, window := 100, []int{10, 50, 100}, 40
	if quick {
		turns, at, window = 12, []int{3, 6, 12}, 6
	}
	on, err := converse(ctx, turns, window, at)
	if err != nil {
		return nil, err
	}
	off, err := converse(ctx, turns, 1<<20, at[len(at)-1:])
	if err != nil {
		return nil, err
	}
	mid, last := on[at[1]], on[at[2]]
	ratio := float64(last.msgTokens) / float64(mid.msgTokens)
	metrics := map[string]float64{"ratio_last_mid": ratio, "tools_tokens": float64(last.toolsTokens)}
	measured := ""
	for i, t := range at {
		metrics[fmt.Sprintf("turn%d_message_tokens", t)] = float64(on[t].msgTokens)
		metrics[fmt.Sprintf("turn%d_messages", t)] = float64(on[t].messages)
		if i > 0 {
			measured += ", "
		}
		measured += fmt.Sprintf("t%d %d", t, on[t].msgTokens)
	}
	metrics["unwindowed_last_message_tokens"] = float64(off[at[2]].msgTokens)
	return []Row{{
		Figure:   fmt.Sprintf("8. prompt tokens per call, turns %d/%d/%d, window %d", at[0], at[1], at[2], window),
		Measured: fmt.Sprintf("%s (t%d/t%d = %.2f)", measured, at[2], at[1], ratio),
		Target:   fmt.Sprintf("t%d <= %.2f x t%d", at[2], flatMax, at[1]),
		Result:   verdict(ratio <= flatMax),
		Note: fmt.Sprintf("messages array of each turn's 1st model call (%d, %d, %d messages), %s; a read-only tool call every 3rd turn; "+
			"plus %d tokens of tools per call; without windowing turn %d would send %d tokens",
			on[at[0]].messages, mid.messages, last.messages, Encoding, last.toolsTokens, at[2], off[at[2]].msgTokens),
		Metrics: metrics,
	}}, nil
}
