package rendertest

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/golden"
)

// Payload is one successful call of the platform's API that set a
// message's content, as the platform's fake received it.
type Payload struct {
	// Message is the platform's id of the message the call created or
	// changed (Telegram's message_id, Slack's ts, Discord's id).
	Message string
	// Method is the API method or route (sendMessage, chat.update,
	// "POST /channels/{ch}/messages").
	Method string
	// Body is what was sent: the JSON body, or the form parameters, with
	// the fields that only address the message (chat, channel, ids, ts)
	// left out. See [FormBody].
	Body any
}

// FormBody reads form parameters as a payload body: one value is a
// string, JSON values (Slack's blocks, Telegram's reply_markup) are
// decoded so that the golden file shows their structure, and the
// parameters named in drop are left out.
func FormBody(form url.Values, drop ...string) map[string]any {
	body := map[string]any{}
	for k, vs := range form {
		if len(vs) == 0 || contains(drop, k) {
			continue
		}
		v := vs[0]
		var decoded any
		if (strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[")) && json.Unmarshal([]byte(v), &decoded) == nil {
			body[k] = decoded
			continue
		}
		body[k] = v
	}
	return body
}

// JSONBody reads a JSON request body as a payload body; an undecodable
// one is kept as a string.
func JSONBody(raw []byte) any {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return v
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// goldenTime is when every golden scenario happens, so that expiries and
// decision times on cards do not change from run to run.
var goldenTime = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// goldenApproval is the pending request of the golden scenarios.
func goldenApproval(conv, run string) core.Approval {
	a := NewApproval(conv, run, "0a1b2c3d4e5f60718293a4b5c6d7e8f9")
	a.CreatedAt, a.ExpiresAt = goldenTime, goldenTime.Add(30*time.Minute)
	return a
}

var (
	goldenBob   = core.Actor{ID: "u-bob", Name: "@bob"}
	goldenCarol = core.Actor{ID: "u-carol", Name: "@carol"}
)

// decidedAs returns a decided as status by, at a fixed time.
func decidedAs(a core.Approval, st core.ApprovalStatus, by core.Actor, reason string) core.Approval {
	a.Status, a.DecidedBy, a.Reason = st, by, reason
	if by.ID != "" {
		a.DecidedAt = goldenTime.Add(5 * time.Minute)
	}
	return a
}

// goldenScenario is what people see of one run: the events the engine
// sends, as a script.
type goldenScenario struct {
	name string
	play func(s *Script) [][]core.Event
}

// paused is a run that says what it will do and asks for approval of a.
func paused(s *Script, a core.Approval) []core.Event {
	return []core.Event{s.Event(core.EventReady), s.Event(core.EventGenerationStart), s.Text(core.EventToken, "I will scale web to 3."),
		s.Text(core.EventGenerationComplete, "I will scale web to 3."),
		s.Approval(core.EventToolAwaitingApproval, a), s.Completed(core.RunAwaitingApproval, "")}
}

// resumed is the run going on after a decision on a: the tool runs
// (failing with failure, if set) when a was approved, and the model answers.
func resumed(s *Script, a core.Approval, failure, answer string) []core.Event {
	typ := core.EventToolDenied
	if a.Status == core.ApprovalApproved {
		typ = core.EventToolApproved
	}
	evs := []core.Event{s.Event(core.EventReady), s.Approval(typ, a)}
	if a.Status == core.ApprovalApproved {
		evs = append(evs, s.Tool(core.EventToolExecuting, a.CallID, a.Tool, string(a.Arguments)))
		if failure != "" {
			ev := s.Tool(core.EventToolError, a.CallID, a.Tool, string(a.Arguments))
			ev.Error = failure
			evs = append(evs, ev)
		} else {
			evs = append(evs, s.Tool(core.EventToolResult, a.CallID, a.Tool, string(a.Arguments)))
		}
	}
	return append(evs, s.Event(core.EventGenerationStart), s.Text(core.EventToken, answer), s.Completed(core.RunDone, answer))
}

// goldenScenarios are the cards in every state, drafts and tool lines.
var goldenScenarios = []goldenScenario{
	{"card-pending", func(s *Script) [][]core.Event {
		return [][]core.Event{paused(s, goldenApproval(s.Conv, s.Run))}
	}},
	{"card-pending-destructive", func(s *Script) [][]core.Event {
		a := goldenApproval(s.Conv, s.Run)
		a.Tool, a.Risk = "delete_namespace", core.RiskDestructive
		a.Arguments = json.RawMessage(`{"name":"staging"}`)
		return [][]core.Event{paused(s, a)}
	}},
	{"card-partially-voted", func(s *Script) [][]core.Event {
		a := goldenApproval(s.Conv, s.Run)
		a.Verdict.Quorum = 2
		voted := a
		voted.Votes = []core.Vote{{Person: "bob", Actor: goldenBob, Approve: true, At: goldenTime.Add(2 * time.Minute)}}
		return [][]core.Event{paused(s, a), {s.Approval(core.EventToolAwaitingApproval, voted)}}
	}},
	{"card-approved-executed", func(s *Script) [][]core.Event {
		a := goldenApproval(s.Conv, s.Run)
		return [][]core.Event{paused(s, a), resumed(s, decidedAs(a, core.ApprovalApproved, goldenBob, ""), "", "Scaled web to 3 replicas.")}
	}},
	{"card-approved-failed", func(s *Script) [][]core.Event {
		a := goldenApproval(s.Conv, s.Run)
		return [][]core.Event{paused(s, a), resumed(s, decidedAs(a, core.ApprovalApproved, goldenBob, ""),
			"deployments.apps \"web\" is forbidden", "The scale was refused by the cluster.")}
	}},
	{"card-approved-by-quorum", func(s *Script) [][]core.Event {
		a := goldenApproval(s.Conv, s.Run)
		a.Verdict.Quorum = 2
		done := decidedAs(a, core.ApprovalApproved, goldenCarol, "")
		done.Votes = []core.Vote{{Person: "bob", Actor: goldenBob, Approve: true, At: goldenTime.Add(2 * time.Minute)},
			{Person: "carol", Actor: goldenCarol, Approve: true, At: goldenTime.Add(5 * time.Minute)}}
		return [][]core.Event{paused(s, a), resumed(s, done, "", "Scaled web to 3 replicas.")}
	}},
	{"card-denied", func(s *Script) [][]core.Event {
		a := goldenApproval(s.Conv, s.Run)
		return [][]core.Event{paused(s, a), resumed(s, decidedAs(a, core.ApprovalDenied, goldenBob, "not during the freeze"), "", "I did not scale web.")}
	}},
	{"card-expired", func(s *Script) [][]core.Event {
		a := goldenApproval(s.Conv, s.Run)
		return [][]core.Event{paused(s, a), resumed(s, decidedAs(a, core.ApprovalExpired, core.Actor{}, ""), "", "Nobody approved in time.")}
	}},
	{"card-superseded", func(s *Script) [][]core.Event {
		a := goldenApproval(s.Conv, s.Run)
		return [][]core.Event{paused(s, a), resumed(s, decidedAs(a, core.ApprovalSuperseded, core.Actor{}, ""), "", "Answering your new message.")}
	}},
	{"card-cancelled-by-stop", func(s *Script) [][]core.Event {
		a := goldenApproval(s.Conv, s.Run)
		return [][]core.Event{paused(s, a), {s.Event(core.EventReady), s.Approval(core.EventToolDenied, decidedAs(a, core.ApprovalCancelled, core.Actor{}, "")),
			s.Completed(core.RunStopped, "")}}
	}},
	{"card-preview", func(s *Script) [][]core.Event {
		// Posted while the preview is worked out, then edited to show it
		// (docs/design.md §18).
		a := goldenApproval(s.Conv, s.Run)
		a.Preview = &core.Preview{Status: core.PreviewPending}
		ready := a
		ready.Preview = &core.Preview{Status: core.PreviewReady, Summary: "replicas: 2 → 3",
			Diff: " Deployment prod/web\n-replicas: 2\n+replicas: 3", Hash: "9c1f"}
		return [][]core.Event{paused(s, a), {s.Approval(core.EventToolAwaitingApproval, ready)}}
	}},
	{"card-no-preview", func(s *Script) [][]core.Event {
		a := goldenApproval(s.Conv, s.Run)
		a.Preview = &core.Preview{Status: core.PreviewNone, Why: "timed out"}
		return [][]core.Event{paused(s, a)}
	}},
	{"card-stale", func(s *Script) [][]core.Event {
		// Approved, then found changed before it ran: the card says it
		// did not run, and the request asked again says what changed.
		a := goldenApproval(s.Conv, s.Run)
		a.Preview = &core.Preview{Status: core.PreviewReady, Summary: "replicas: 2 → 3", Diff: "-replicas: 2\n+replicas: 3", Hash: "9c1f"}
		stale := decidedAs(a, core.ApprovalApproved, goldenBob, "")
		p := *a.Preview
		p.Stale = `not run: changed since it was approved: was "replicas: 2 → 3", now "replicas: 4 → 3"; asked again in a new request`
		stale.Preview = &p
		again := goldenApproval(s.Conv, s.Run)
		again.ID = "1b2c3d4e5f60718293a4b5c6d7e8f9a0"
		again.Preview = &core.Preview{Status: core.PreviewReady, Summary: "replicas: 4 → 3", Diff: "-replicas: 4\n+replicas: 3", Hash: "7e02",
			Changed: `changed since it was approved: was "replicas: 2 → 3", now "replicas: 4 → 3"`}
		return [][]core.Event{paused(s, a), {s.Event(core.EventReady), s.Approval(core.EventToolApproved, stale),
			s.Approval(core.EventToolAwaitingApproval, again), s.Completed(core.RunAwaitingApproval, "")}}
	}},
	{"proposal-pending", func(s *Script) [][]core.Event {
		return [][]core.Event{proposed(s, goldenProposal(s))}
	}},
	{"proposal-promoted", func(s *Script) [][]core.Event {
		p := goldenProposal(s)
		return [][]core.Event{proposed(s, p), {s.Approval(core.EventToolApproved, decidedAs(p, core.ApprovalApproved, goldenBob, ""))}}
	}},
	{"proposal-rejected", func(s *Script) [][]core.Event {
		p := goldenProposal(s)
		return [][]core.Event{proposed(s, p), {s.Approval(core.EventToolDenied, decidedAs(p, core.ApprovalDenied, goldenBob, ""))}}
	}},
	{"draft-running", func(s *Script) [][]core.Event {
		return [][]core.Event{append([]core.Event{s.Event(core.EventReady), s.Event(core.EventGenerationStart)},
			s.Tokens("Checking the deployment history of **web** now", 6)...)}
	}},
	{"draft-answer", func(s *Script) [][]core.Event {
		answer := "web runs **3** replicas:\n\n- `web-1` ready\n- `web-2` ready\n- `web-3` ready\n\n```\nkubectl -n prod get deploy web\n```"
		evs := append([]core.Event{s.Event(core.EventReady), s.Event(core.EventGenerationStart)}, s.Tokens(answer, 9)...)
		return [][]core.Event{append(evs, s.Text(core.EventGenerationComplete, answer), s.Completed(core.RunDone, answer))}
	}},
	{"draft-stopped", func(s *Script) [][]core.Event {
		evs := append([]core.Event{s.Event(core.EventReady), s.Event(core.EventGenerationStart)}, s.Tokens("Checking the deployment history now", 6)...)
		return [][]core.Event{evs, {s.Completed(core.RunStopped, "")}}
	}},
	{"draft-error", func(s *Script) [][]core.Event {
		return [][]core.Event{{s.Event(core.EventReady), s.Event(core.EventGenerationStart), s.Text(core.EventToken, "Looking"),
			s.Text(core.EventWorkflowError, "the model endpoint answered HTTP 401: check llm.api_key"), s.Completed(core.RunError, "")}}
	}},
	{"tool-lines", func(s *Script) [][]core.Event {
		failed := s.Tool(core.EventToolError, "c2", "get_logs", `{"pod":"web-1"}`)
		failed.Error = "pod web-1 not found"
		return [][]core.Event{
			{s.Event(core.EventReady), s.Event(core.EventGenerationStart), s.Text(core.EventToken, "Let me look."),
				s.Text(core.EventGenerationComplete, "Let me look."), s.Tool(core.EventToolExecuting, "c1", "get_pods", `{"namespace":"prod"}`)},
			{s.Tool(core.EventToolResult, "c1", "get_pods", `{"namespace":"prod"}`), s.Tool(core.EventToolExecuting, "c2", "get_logs", `{"pod":"web-1"}`)},
			{failed, s.Event(core.EventGenerationStart), s.Text(core.EventToken, "web-1 is gone."), s.Completed(core.RunDone, "web-1 is gone.")},
		}
	}},
	{"tool-running", func(s *Script) [][]core.Event {
		return [][]core.Event{{s.Event(core.EventReady), s.Event(core.EventGenerationStart), s.Text(core.EventToken, "Let me look."),
			s.Text(core.EventGenerationComplete, "Let me look."), s.Tool(core.EventToolExecuting, "c1", "get_pods", `{"namespace":"prod"}`)}}
	}},
}

// proposed is a run that proposes p (the run goes on; admins decide later).
func proposed(s *Script, p core.Approval) []core.Event {
	return []core.Event{s.Event(core.EventReady), s.Event(core.EventGenerationStart),
		s.Tool(core.EventToolExecuting, p.CallID, p.Tool, string(p.Arguments)), s.Tool(core.EventToolResult, p.CallID, p.Tool, string(p.Arguments)),
		s.Approval(core.EventMemoryPromotionProposed, p), s.Event(core.EventGenerationStart),
		s.Text(core.EventToken, "I proposed it; an admin decides."), s.Completed(core.RunDone, "I proposed it; an admin decides.")}
}

// goldenProposal is a proposal to promote a memory document.
func goldenProposal(s *Script) core.Approval {
	a := goldenApproval(s.Conv, s.Run)
	a.Tool, a.Toolset, a.Verdict.Proposal = "memory_propose_promotion", "", true
	a.Arguments = json.RawMessage(`{"id":"doc-1","path":"runbooks/web-scale.md","title":"Scaling web","sha256":"5d41402abc4b2a76b9719d911017c592aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","reason":"It worked three times this week."}`)
	return a
}

// goldenMessage is one message as a golden file shows it: its number in
// the conversation and the last payload that set it.
type goldenMessage struct {
	Message int    `json:"message"`
	Method  string `json:"method"`
	Body    any    `json:"body"`
}

// Golden plays each golden scenario (approval cards in every state,
// proposals, drafts, tool lines) through the adapter's real sender to a
// fresh fake of its platform, and compares what the platform last
// received for each message (payloads(conv), oldest first) with
// testdata/golden/<scenario>.json of the adapter's package, through
// internal/golden: go test -run Golden -update rewrites them.
func Golden(t *testing.T, setup func(t *testing.T) Env, payloads func(conv string) []Payload) {
	for _, sc := range goldenScenarios {
		t.Run(sc.name, func(t *testing.T) {
			e := setup(t)
			conv := e.NewConv()
			s := NewScript(conv, "run-7f3e9a2b5c4d")
			// One event at a time, each sent in full before the next: the
			// sender's debounce and edit interval would otherwise decide,
			// by how fast the machine is, whether a message is posted whole
			// or posted and then edited, and the last payload would differ.
			for _, batch := range sc.play(s) {
				for _, ev := range batch {
					send(t, e, ev)
					flush(t, e)
				}
			}
			golden.CheckJSON(t, filepath.Join("testdata", "golden", sc.name+".json"), lastPayloads(payloads(conv)))
		})
	}
}

// lastPayloads keeps the last payload of each message, in the order the
// messages were first sent, numbered from 1.
func lastPayloads(ps []Payload) []goldenMessage {
	index := map[string]int{}
	var out []goldenMessage
	for _, p := range ps {
		i, ok := index[p.Message]
		if !ok {
			i = len(out)
			index[p.Message] = i
			out = append(out, goldenMessage{Message: i + 1})
		}
		out[i].Method, out[i].Body = p.Method, p.Body
	}
	return out
}
