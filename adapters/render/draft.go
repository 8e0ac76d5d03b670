package render

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
)

// draft is what one run shows in the chat: streamed text and tool status
// lines in the order they happened, a transient notice (model retries) and
// a footer (stopped, failed). Event fields are guarded by the
// conversation's lock; delivery fields belong to its worker alone.
type draft struct {
	run    string
	items  []draftItem
	tools  map[string]*toolLine
	cur    int // the text item being streamed, or -1
	notice string
	footer string
	active bool // the run is going: show a Stop button
	final  bool // completed was seen: deliver everything, then forget the draft
	dirty  bool
	first  time.Time // when the first visible content arrived
	seen   time.Time // the last event

	// A run paused for approval goes on in a new draft under the cards;
	// origin is the paused draft the new one continues, which follows the
	// run from there (resume.go). resumed: the run went on after this
	// draft paused.
	origin  *draft
	resumed bool

	// Delivery state, owned by the worker.
	msgs     []sentMsg
	lastCall time.Time
	calls    int // platform calls made for the draft
	tries    int // failed final deliveries
}

type draftItem struct {
	text string
	tool *toolLine
}

// sentMsg is one message of a draft as the platform has it.
type sentMsg struct {
	ref   MsgRef
	msg   Message
	state sentState
	plain bool // the platform rejected this message's formatting once
}

type sentState int

const (
	sentOK      sentState = iota
	sentUnknown           // a post failed ambiguously: it may exist, we cannot edit it
	sentDead              // an edit was rejected (the message was deleted)
)

func newDraft(run string) *draft {
	return &draft{run: run, cur: -1, tools: map[string]*toolLine{}}
}

// apply updates the draft for ev and reports whether what it shows changed.
func (d *draft) apply(ev core.Event) bool {
	switch ev.Type {
	case core.EventReady:
		d.active = !d.final
		return false
	case core.EventGenerationStart:
		d.active = !d.final
		d.cur = -1
		return false
	case core.EventToken:
		if ev.Text == "" {
			return false
		}
		d.text().text += ev.Text
		d.notice = ""
		return true
	case core.EventGenerationComplete:
		changed := false
		if ev.Text != "" {
			t := d.text()
			changed = t.text != ev.Text
			t.text = ev.Text
		}
		d.cur = -1
		return changed
	case core.EventToolAwaitingApproval, core.EventToolApproved, core.EventToolDenied,
		core.EventToolExecuting, core.EventToolProgress, core.EventToolResult, core.EventToolError:
		return d.applyTool(ev)
	case core.EventRateLimit:
		d.notice = "⏳ The model is rate-limited; retrying" + retryIn(ev) + "…"
		return true
	case core.EventTransientError:
		d.notice = "⏳ The model did not answer; retrying" + retryIn(ev) + "…"
		return true
	case core.EventWorkflowError:
		msg := ev.Text
		if msg == "" {
			msg = ev.Error
		}
		if msg == "" {
			msg = "the run failed"
		}
		d.footer = "⚠️ " + oneLine(msg, 500)
		return true
	case core.EventMemoryContextLoaded:
		if line := MemoryLine(ev.Memory, false); line != "" {
			d.items = append(d.items, draftItem{text: line})
			d.cur = -1
			return true
		}
		return false
	case core.EventCompleted:
		if ev.Text != "" {
			t := d.answer()
			t.text = ev.Text
		}
		if d.footer == "" {
			d.footer = footerFor(ev.Status)
		}
		d.notice = ""
		d.active = false
		d.final = true
		return true
	}
	return false
}

// text returns the text item being streamed, starting one when needed.
func (d *draft) text() *draftItem {
	if d.cur < 0 {
		d.items = append(d.items, draftItem{})
		d.cur = len(d.items) - 1
	}
	return &d.items[d.cur]
}

// answer returns the item the final answer goes into: the last text, unless
// tool lines came after it.
func (d *draft) answer() *draftItem {
	if d.cur < 0 && len(d.items) > 0 && d.items[len(d.items)-1].tool == nil {
		d.cur = len(d.items) - 1
	}
	return d.text()
}

// callOf returns the id, tool name and arguments of the call a tool event
// is about; ok is false for an event about no call.
func callOf(ev core.Event) (id, name string, args json.RawMessage, ok bool) {
	switch {
	case ev.Call != nil:
		return ev.Call.ID, ev.Call.Name, ev.Call.Arguments, true
	case ev.Approval != nil:
		return ev.Approval.CallID, ev.Approval.Tool, ev.Approval.Arguments, true
	}
	return "", "", nil, false
}

func (d *draft) applyTool(ev core.Event) bool {
	id, name, args, ok := callOf(ev)
	if !ok {
		return false
	}
	l, ok := d.tools[id]
	if !ok {
		l = &toolLine{name: name, args: summariseArgs(args)}
		d.tools[id] = l
		d.items = append(d.items, draftItem{tool: l})
		d.cur = -1
	}
	switch ev.Type {
	case core.EventToolAwaitingApproval:
		l.state = toolAwaiting
	case core.EventToolApproved:
		l.state = toolApproved
		if ev.Approval != nil {
			l.detail = Outcome(*ev.Approval)
		}
	case core.EventToolDenied:
		l.state = toolNotRun
		l.detail = "not run"
		if ev.Approval != nil {
			l.detail = Outcome(*ev.Approval)
		}
	case core.EventToolExecuting:
		l.state = toolRunning
	case core.EventToolProgress:
		if ev.Call != nil && ev.Call.Progress != nil {
			l.progress = progressText(*ev.Call.Progress)
		}
	case core.EventToolResult:
		l.state, l.took = toolDone, ev.Duration
	case core.EventToolError:
		l.state, l.took = toolFailed, ev.Duration
		l.detail = ev.Error
		if l.detail == "" && ev.Call != nil {
			l.detail = ev.Call.Result
		}
	}
	return true
}

// compose renders the draft as one Markdown document.
func (d *draft) compose() string {
	var blocks, tools []string
	flushTools := func() {
		if len(tools) > 0 {
			blocks = append(blocks, strings.Join(tools, "\n"))
			tools = nil
		}
	}
	for _, it := range d.items {
		if it.tool != nil {
			tools = append(tools, it.tool.String())
			continue
		}
		flushTools()
		if t := strings.Trim(it.text, " \t\n"); t != "" {
			blocks = append(blocks, closeFences(t))
		}
	}
	flushTools()
	if d.notice != "" {
		blocks = append(blocks, d.notice)
	}
	if d.footer != "" {
		blocks = append(blocks, d.footer)
	}
	return strings.Join(blocks, "\n\n")
}

func footerFor(s core.RunStatus) string {
	switch s {
	case core.RunStopped:
		return "⏹ Stopped."
	case core.RunAwaitingApproval:
		return "⏸ Waiting for approval."
	case core.RunError:
		return "⚠️ The run failed."
	case core.RunMaxIterations:
		return "⚠️ Stopped: the limit of model calls for one request was reached."
	}
	return ""
}

func retryIn(ev core.Event) string {
	s := ""
	if ev.RetryAfter > 0 {
		s = " in " + seconds(ev.RetryAfter)
	}
	if ev.Attempt > 0 {
		s += fmt.Sprintf(" (attempt %d)", ev.Attempt)
	}
	return s
}

func progressText(p core.Progress) string {
	s := ""
	if p.Total > 0 {
		s = fmt.Sprintf("%.0f/%.0f", p.Progress, p.Total)
	}
	if p.Message != "" {
		s = strings.TrimSpace(s + " " + oneLine(p.Message, 60))
	}
	return s
}

// MemoryLine is the one compact line that says which memory the model was
// given: "📚 runbook: `payments/rollback.md` · incident lesson: `inc-2041.md`";
// unreviewed drafts are marked. plain leaves the paths unquoted (for a
// terminal).
func MemoryLine(refs []core.MemoryRef, plain bool) string {
	var parts []string
	byType := map[string][]string{}
	var types []string
	for _, r := range refs {
		name := "`" + strings.ReplaceAll(r.Path, "`", "'") + "`"
		if plain {
			name = r.Path
		}
		if !r.Trusted {
			name += " (draft)"
		}
		if _, ok := byType[r.Type]; !ok {
			types = append(types, r.Type)
		}
		byType[r.Type] = append(byType[r.Type], name)
	}
	for _, t := range types {
		parts = append(parts, strings.ReplaceAll(t, "_", " ")+": "+strings.Join(byType[t], ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return "📚 " + strings.Join(parts, " · ")
}
