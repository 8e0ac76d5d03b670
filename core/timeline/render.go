package timeline

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// timeLayout is how steps show their time: UTC, to the second.
const timeLayout = "2006-01-02 15:04:05Z"

// JSON is the timeline as `incident report --format json` prints it and the
// API answers it: indented, fields in a fixed order, times in UTC.
func (t Timeline) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// icon marks a step's kind in Markdown and chat.
func (s Step) icon() string {
	switch s.Kind {
	case AlertFired:
		return "🔥"
	case AlertResolved:
		return "✅"
	case Message:
		return "💬"
	case Answer:
		return "🤖"
	case ToolCall:
		if s.Outcome != "ok" {
			return "❌"
		}
		return "🔧"
	case ApprovalAsked:
		return "✋"
	case ApprovalVoted:
		return "🗳"
	case ApprovalDecided:
		if s.Outcome == "approved" {
			return "👍"
		}
		return "👎"
	case Refused:
		return "🚫"
	case Preview:
		return "🔍"
	case Stop:
		return "⏹"
	case Error:
		return "⚠️"
	}
	return "•"
}

// header is the report's summary lines.
func (t Timeline) header() []string {
	lines := []string{
		"Conversation: " + t.ConvKey,
	}
	if !t.Start.IsZero() {
		lines = append(lines, fmt.Sprintf("Start: %s · End: %s · Duration: %s", t.Start.Format(timeLayout), t.End.Format(timeLayout), human(t.Duration())))
	}
	people := "none"
	if len(t.People) > 0 {
		people = strings.Join(t.People, ", ")
	}
	lines = append(lines, "People: "+people)
	changes := "none"
	if len(t.Changes) > 0 {
		var cs []string
		for _, c := range t.Changes {
			s := c.Tool + " (" + c.Outcome
			if len(c.ApprovedBy) > 0 {
				s += ", approved by " + strings.Join(c.ApprovedBy, ", ")
			}
			cs = append(cs, s+")")
		}
		changes = strings.Join(cs, "; ")
	}
	lines = append(lines, "Changes made: "+changes)
	a := t.Approvals
	lines = append(lines, fmt.Sprintf("Approvals: %d asked, %d approved, %d denied, %d other", a.Asked, a.Approved, a.Denied, a.Other))
	return lines
}

// Markdown is the report `opsgate incident report` prints: a header
// (duration, people, changes made, approvals) and every step in order.
func (t Timeline) Markdown() string {
	var b strings.Builder
	title := t.Title
	if title == "" {
		title = t.ConvKey
	}
	fmt.Fprintf(&b, "# Incident report: %s\n\n", oneLine(title))
	for _, l := range t.header() {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	b.WriteString("\n## Timeline (UTC)\n\n| Time | Actor | Step |\n|---|---|---|\n")
	for _, s := range t.Steps {
		fmt.Fprintf(&b, "| %s | %s | %s %s |\n", s.Time.Format(timeLayout), cell(s.Actor), s.icon(), cell(s.Text))
	}
	return b.String()
}

// shortMax is how many steps /timeline shows in chat.
const shortMax = 20

// Short is the timeline as /timeline posts it in chat: the header and at
// most 20 steps (the first and the last ones), opsgate's answers left out.
func (t Timeline) Short() string {
	var b strings.Builder
	b.WriteString("🕒 *Timeline* (UTC)\n")
	for _, l := range t.header()[1:] {
		b.WriteString(l + "\n")
	}
	var steps []Step
	for _, s := range t.Steps {
		if s.Kind != Answer {
			steps = append(steps, s)
		}
	}
	cut := 0
	if len(steps) > shortMax {
		cut = len(steps) - shortMax
		head := steps[:shortMax/2]
		steps = append(head[:len(head):len(head)], steps[len(steps)-shortMax/2:]...)
	}
	for i, s := range steps {
		if cut > 0 && i == shortMax/2 {
			fmt.Fprintf(&b, "… %d more steps: `opsgate incident report %s`\n", cut, t.ConvKey)
		}
		fmt.Fprintf(&b, "`%s` %s %s: %s\n", s.Time.Format("15:04:05"), s.icon(), oneLine(s.Actor), oneLine(s.Text))
	}
	return strings.TrimRight(b.String(), "\n")
}

// oneLine keeps text on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}

// human is a duration rounded for people: microseconds under a
// millisecond, milliseconds under a second, seconds under an hour, minutes
// above.
func human(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// Redact passes every text of t through f (the redactor of what people
// are shown, docs/design.md §11).
func (t *Timeline) Redact(f func(string) string) {
	if f == nil {
		return
	}
	t.Title = f(t.Title)
	for i := range t.Steps {
		s := &t.Steps[i]
		s.Text, s.Actor = f(s.Text), f(s.Actor)
		if s.Alert != nil {
			s.Alert.Summary = f(s.Alert.Summary)
		}
	}
}
