package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
)

// toolState is where a tool call is, as its status line shows it.
type toolState int

const (
	toolAwaiting toolState = iota
	toolApproved
	toolRunning
	toolDone
	toolFailed
	toolNotRun // denied, expired, superseded, cancelled
)

// toolLine is the one line a tool call gets in the draft.
type toolLine struct {
	name     string
	args     string
	state    toolState
	progress string
	detail   string // the error, or who denied and why
	took     time.Duration
}

// String renders the line as Markdown. The tool name and arguments are a
// code span so that model-chosen text cannot inject markup.
func (l *toolLine) String() string {
	label := l.name
	if l.args != "" {
		label += " " + l.args
	}
	code := "`" + strings.ReplaceAll(label, "`", "'") + "`"
	switch l.state {
	case toolAwaiting:
		return "⏸ " + code + " awaiting approval"
	case toolApproved:
		return "👍 " + code + " " + l.detail
	case toolRunning:
		if l.progress != "" {
			return "⏳ " + code + " " + l.progress
		}
		return "⏳ " + code
	case toolDone:
		return "✅ `" + l.name + "` " + seconds(l.took)
	case toolFailed:
		return "❌ `" + l.name + "` " + oneLine(l.detail, 120)
	default:
		return "🚫 `" + l.name + "` " + l.detail
	}
}

func seconds(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// summariseArgs shows the scalar arguments of a call as k=v pairs, short
// enough for one line.
func summariseArgs(raw json.RawMessage) string {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if len(bytes.TrimSpace(raw)) == 0 || dec.Decode(&m) != nil {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		switch v := m[k].(type) {
		case string:
			parts = append(parts, k+"="+oneLine(v, 40))
		case json.Number, bool:
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		default:
			parts = append(parts, k+"=…")
		}
	}
	return oneLine(strings.Join(parts, " "), 80)
}

// oneLine returns the first line of s, cut to max runes.
func oneLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return core.Truncate(s, max, core.Runes)
}

// outcome describes a decided approval for people: "approved by @alice".
// Outcome says how an approval request ended, for people: "approved by
// Alice", "denied by Bob: not during peak", "expired, not run".
func Outcome(a core.Approval) string {
	if a.Verdict.Proposal {
		switch a.Status {
		case core.ApprovalApproved:
			return "promoted by " + who(a.DecidedBy)
		case core.ApprovalDenied:
			return "rejected by " + who(a.DecidedBy)
		case core.ApprovalExpired:
			return "expired, not promoted"
		}
	}
	switch a.Status {
	case core.ApprovalApproved:
		if names := approvers(a); len(names) > 1 {
			return "approved by " + strings.Join(names, " and ")
		}
		return "approved by " + who(a.DecidedBy)
	case core.ApprovalDenied:
		s := "denied by " + who(a.DecidedBy)
		if a.Reason != "" {
			s += ": " + oneLine(a.Reason, 200)
		}
		return s
	case core.ApprovalExpired:
		return "expired, not run"
	case core.ApprovalSuperseded:
		return "superseded by a new message, not run"
	case core.ApprovalCancelled:
		return "cancelled, not run"
	default:
		if a.Quorum() > 1 || len(a.Votes) > 0 {
			return "awaiting approval: " + Progress(a)
		}
		return "awaiting approval"
	}
}

// Progress is a quorum's state: "1 of 2 approvals: alice".
func Progress(a core.Approval) string {
	s := fmt.Sprintf("%d of %d approvals", a.Approvals(), a.Quorum())
	if names := approvers(a); len(names) > 0 {
		s += ": " + strings.Join(names, ", ")
	}
	return s
}

// approvers names the people whose approvals are counted, in order.
func approvers(a core.Approval) []string {
	var names []string
	for _, v := range a.Votes {
		if v.Approve {
			names = append(names, who(v.Actor))
		}
	}
	return names
}

func who(a core.Actor) string {
	if s := a.String(); s != "" {
		return s
	}
	return "someone"
}
