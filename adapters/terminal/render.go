package terminal

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
)

// ANSI styles, used only when Options.Color is set.
const (
	reset  = "\x1b[0m"
	red    = "\x1b[31m"
	green  = "\x1b[32m"
	yellow = "\x1b[33m"
	dim    = "\x1b[2m"
	bold   = "\x1b[1m"
)

// Send renders one event. Text streams as it comes; each tool call gets a
// status line; an approval request shows the tool, its arguments and risk,
// and is asked once the run has paused. It never blocks on input.
func (a *Adapter) Send(_ context.Context, ev core.Event) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	w := &errWriter{w: a.opts.Out}
	a.render(w, ev)
	return w.err
}

func (a *Adapter) render(w *errWriter, ev core.Event) {
	switch ev.Type {
	case core.EventReady:
		a.failed, a.answered = false, false
	case core.EventMemoryContextLoaded:
		if line := render.MemoryLine(ev.Memory, true); line != "" {
			a.line(w, a.paint(dim, Sanitize(line)))
		}
	case core.EventGenerationStart:
		a.streamed, a.streamedText = false, ""
	case core.EventToken:
		if ev.Text != "" {
			a.write(w, Sanitize(ev.Text))
			a.streamed, a.answered = true, true
			a.streamedText += ev.Text
		}
	case core.EventGenerationComplete:
		a.answered = a.answered || strings.TrimSpace(ev.Text) != ""
		switch {
		case !a.streamed && strings.TrimSpace(ev.Text) != "":
			a.write(w, Sanitize(ev.Text))
		case strings.HasPrefix(ev.Text, a.streamedText) && len(ev.Text) > len(a.streamedText):
			// The stream's last words, held back until the answer was
			// whole (the redactor does that with what could be a secret).
			a.write(w, Sanitize(ev.Text[len(a.streamedText):]))
		}
		a.streamed, a.streamedText = false, ""
		a.endLine(w)
	case core.EventToolExecuting:
		if ev.Call != nil {
			a.line(w, "⏳ "+Sanitize(ev.Call.Name)+argSummary(ev.Call.Arguments, statusArgs))
			a.lastCall = ev.Call.ID
		}
	case core.EventToolResult, core.EventToolError:
		a.toolDone(w, ev)
	case core.EventToolAwaitingApproval:
		switch {
		case ev.Approval == nil:
		case ev.ConvKey != "" && ev.ConvKey != a.conv:
			// A run of the conversation left by /new paused on its way
			// out: a "y" typed now is meant for this conversation, so it is
			// not asked; unanswered, it expires (a denial).
			a.line(w, a.paint(dim, fmt.Sprintf("(the previous conversation asks to run %s; not asked here, it will expire)", Sanitize(ev.Approval.Tool))))
		default:
			a.request(w, *ev.Approval)
		}
	case core.EventToolApproved, core.EventToolDenied:
		a.decided(w, ev)
	case core.EventRateLimit:
		a.line(w, a.paint(yellow, fmt.Sprintf("… the model provider is rate limiting; retrying in %s (attempt %d)", short(ev.RetryAfter), ev.Attempt)))
	case core.EventTransientError:
		a.line(w, a.paint(yellow, fmt.Sprintf("… the model endpoint failed (%s); retrying in %s (attempt %d)", oneLine(ev.Error, 120), short(ev.RetryAfter), ev.Attempt)))
	case core.EventWorkflowError:
		a.failed = true
		a.line(w, a.paint(red, "⚠ error: "+Sanitize(firstNonEmpty(ev.Text, ev.Error))))
	case core.EventCompleted:
		a.completed(w, ev)
	default:
		// thinking, usage, memory and title events are not shown here.
	}
}

func (a *Adapter) toolDone(w *errWriter, ev core.Event) {
	if ev.Call == nil {
		return
	}
	took := ""
	if ev.Duration > 0 { // in-process tools such as load_toolset take no time
		took = " " + short(ev.Duration)
	}
	name := Sanitize(ev.Call.Name)
	var text string
	if ev.Type == core.EventToolError || ev.Call.IsError {
		detail := firstNonEmpty(ev.Error, ev.Call.Result)
		text = a.paint(red, fmt.Sprintf("❌ %s%s: %s", name, took, oneLine(detail, 160)))
	} else {
		text = a.paint(green, "✅ ") + name + took
	}
	// On a terminal, the finished line replaces its ⏳ line when that is
	// still the last line printed.
	if a.opts.Color && a.lastCall == ev.Call.ID && !a.midLine {
		w.WriteString("\x1b[1A\r\x1b[2K")
	}
	a.line(w, text)
	a.lastCall = ""
}

// request is an approval waiting for an answer, numbered in its batch.
type request struct {
	core.Approval
	n int // 1 for the first request of the batch
}

func (a *Adapter) request(w *errWriter, ap core.Approval) {
	if len(ap.Votes) > 0 {
		// A vote counted towards a quorum: the request was asked already.
		names := make([]string, 0, len(ap.Votes))
		for _, v := range ap.Votes {
			if v.Approve {
				names = append(names, v.Actor.String())
			}
		}
		a.line(w, a.paint(yellow, Sanitize(fmt.Sprintf("⏳ %s: %d of %d approvals: %s", ap.Tool, ap.Approvals(), ap.Quorum(), strings.Join(names, ", ")))))
		return
	}
	if a.isPending(ap.ID) {
		// The request was asked already: its preview arrived.
		a.preview(w, ap)
		return
	}
	if len(a.pending) == 0 {
		a.batch = 0 // a new batch: the last one was answered
	}
	a.batch++
	a.pending = append(a.pending, request{Approval: ap, n: a.batch})
	risk := Sanitize(string(ap.Risk))
	color := yellow
	if ap.Risk == core.RiskDestructive {
		risk, color = "DESTRUCTIVE", red
	}
	where := ""
	if ap.Toolset != "" {
		where = " on " + Sanitize(ap.Toolset)
	}
	a.line(w, a.paint(color+bold, fmt.Sprintf("⚠ approval needed: %s%s (%s)", Sanitize(ap.Tool), where, risk)))
	args := string(ap.Arguments)
	if args == "" {
		args = "{}"
	}
	a.line(w, "    arguments: "+Sanitize(args))
	meta := "    requested by " + Sanitize(ap.Requester.String())
	if !ap.ExpiresAt.IsZero() && !ap.CreatedAt.IsZero() {
		meta += ", expires in " + short(ap.ExpiresAt.Sub(ap.CreatedAt))
	}
	a.line(w, meta)
	a.preview(w, ap)
}

func (a *Adapter) decided(w *errWriter, ev core.Event) {
	name := ""
	var ap core.Approval
	if ev.Approval != nil {
		ap = *ev.Approval
		name = ap.Tool
		a.dropPending(ap.ID)
	} else if ev.Call != nil {
		name = ev.Call.Name
	}
	name = Sanitize(name)
	if ev.Type == core.EventToolApproved {
		if p := ap.Preview; p != nil && p.Stale != "" {
			a.line(w, a.paint(yellow, "⚠ "+name+": "+Sanitize(oneLine(p.Stale, 300))))
			return
		}
		a.line(w, a.paint(green, "✔ ")+name+" approved by "+Sanitize(ap.DecidedBy.String()))
		return
	}
	var text string
	switch ap.Status {
	case core.ApprovalExpired:
		text = name + ": the approval expired"
	case core.ApprovalSuperseded:
		text = name + ": superseded by a new message"
	case core.ApprovalCancelled:
		text = name + ": cancelled"
	default:
		text = name + " denied"
		if who := Sanitize(ap.DecidedBy.String()); who != "" {
			text += " by " + who
		}
		if ap.Reason != "" {
			text += ": " + oneLine(ap.Reason, 160)
		}
	}
	a.line(w, a.paint(red, "✖ "+text))
}

func (a *Adapter) dropPending(id string) {
	for i, p := range a.pending {
		if p.ID == id {
			a.pending = append(a.pending[:i:i], a.pending[i+1:]...)
			return
		}
	}
}

func (a *Adapter) completed(w *errWriter, ev core.Event) {
	a.endLine(w)
	switch ev.Status {
	case core.RunAwaitingApproval:
		a.busy = false
		a.askLocked(w)
		return
	case core.RunStopped:
		a.line(w, a.paint(dim, "⏹ stopped"))
	case core.RunMaxIterations:
		a.line(w, a.paint(yellow, "⚠ stopped after llm.max_iterations model calls; send a message to continue"))
	case core.RunError:
		a.failures++
		if !a.failed {
			a.line(w, a.paint(red, "⚠ error: "+Sanitize(firstNonEmpty(ev.Error, ev.Text, "the run failed"))))
		}
	case core.RunDone:
		if !a.answered && strings.TrimSpace(ev.Text) != "" {
			// An answer without a model call: a command's (/memory …).
			a.line(w, Sanitize(strings.TrimSpace(ev.Text)))
		}
	}
	a.busy = false
	a.failed = false
	if len(a.pending) == 0 {
		a.promptLocked(w)
	}
}

// ask asks about the oldest pending approval.
func (a *Adapter) ask() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.askLocked(&errWriter{w: a.opts.Out})
}

func (a *Adapter) askLocked(w *errWriter) {
	if len(a.pending) == 0 {
		return
	}
	r := a.pending[0]
	if a.asked == r.ID {
		return
	}
	a.asked = r.ID
	q := a.question(r)
	if r.Risk == core.RiskDestructive {
		q = a.paint(red+bold, q)
	}
	a.endLine(w)
	if a.opts.Interactive {
		a.write(w, q)
		return
	}
	a.line(w, strings.TrimSpace(q))
}

// question asks about r so that two requests of a batch are told apart,
// also when they are for the same tool: "approve write_file 2/2
// (content=hi path=/tmp/b)? [y/N] ".
func (a *Adapter) question(r request) string {
	var b strings.Builder
	b.WriteString("approve ")
	if r.Risk == core.RiskDestructive {
		b.WriteString("DESTRUCTIVE ")
	}
	b.WriteString(Sanitize(r.Tool))
	if a.batch > 1 {
		fmt.Fprintf(&b, " %d/%d", r.n, a.batch)
	}
	if args := argSummary(r.Arguments, promptArgs); args != "" {
		b.WriteString(" (" + args[1:] + ")")
	}
	b.WriteString("? [y/N] ")
	return b.String()
}

// prompt shows the input prompt on a terminal.
func (a *Adapter) prompt() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.promptLocked(&errWriter{w: a.opts.Out})
}

func (a *Adapter) promptLocked(w *errWriter) {
	if a.opts.Interactive && !a.busy {
		a.endLine(w)
		a.write(w, a.paint(bold, "> "))
	}
}

func (a *Adapter) println(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.printLocked(s)
}

func (a *Adapter) printLocked(s string) {
	a.line(&errWriter{w: a.opts.Out}, s)
}

// line writes s on a line of its own.
func (a *Adapter) line(w *errWriter, s string) {
	a.endLine(w)
	a.write(w, s+"\n")
	a.lastCall = ""
}

func (a *Adapter) endLine(w *errWriter) {
	if a.midLine {
		a.write(w, "\n")
	}
}

func (a *Adapter) write(w *errWriter, s string) {
	if s == "" {
		return
	}
	w.WriteString(s)
	a.midLine = !strings.HasSuffix(s, "\n")
}

func (a *Adapter) paint(style, s string) string {
	if !a.opts.Color {
		return s
	}
	return style + s + reset
}

// errWriter keeps the first write error so rendering code stays linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (w *errWriter) WriteString(s string) {
	if w.err == nil {
		_, w.err = io.WriteString(w.w, s)
	}
}

// short formats a duration for people: 0.4s, 12s, 3m, 1h30m.
func short(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds()))
	}
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	var b strings.Builder
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if s > 0 && h == 0 {
		fmt.Fprintf(&b, "%ds", s)
	}
	return b.String()
}

// oneLine makes s one line of at most max characters, safe to print.
func oneLine(s string, max int) string {
	return core.Truncate(flat(s), max, core.Runes)
}

// flat makes s one line, safe to print: runs of white space become one space.
func flat(s string) string { return strings.Join(strings.Fields(Sanitize(s)), " ") }

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}
