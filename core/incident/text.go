package incident

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// RootText is the incident's root message: the alert, its severity, its
// summary and description, how many alerts fire, since when, and where
// the alert comes from. A resolved incident says so first.
func RootText(r Record, now time.Time) string {
	lead := r.Lead()
	var b strings.Builder
	state := "🔥 FIRING"
	if r.Status == Resolved {
		state = "✅ RESOLVED"
	}
	fmt.Fprintf(&b, "%s: %s", state, lead.Name())
	if s := lead.Severity(); s != "" {
		fmt.Fprintf(&b, " (severity %s)", s)
	}
	b.WriteString("\n")
	if s := oneLine(lead.Annotations["summary"]); s != "" {
		fmt.Fprintf(&b, "Summary: %s\n", s)
	}
	if d := oneLine(lead.Annotations["description"]); d != "" {
		fmt.Fprintf(&b, "Description: %s\n", d)
	}
	fmt.Fprintf(&b, "Firing: %d of %d alerts · notifications: %d\n", len(r.Firing()), len(r.Alerts), r.Notifications)
	fmt.Fprintf(&b, "Started: %s", r.StartedAt().UTC().Format("2006-01-02 15:04:05 UTC"))
	if r.Status == Resolved {
		fmt.Fprintf(&b, " · resolved after %s", formatDuration(r.Duration(now)))
	}
	b.WriteString("\n")
	if lead.GeneratorURL != "" {
		fmt.Fprintf(&b, "Source: %s\n", lead.GeneratorURL)
	}
	fmt.Fprintf(&b, "Incident %s", r.Key)
	return b.String()
}

// Title names a Discord thread after the incident.
func Title(r Record) string {
	lead := r.Lead()
	t := "🔥 " + lead.Name()
	if s := lead.Severity(); s != "" {
		t += " (" + s + ")"
	}
	return t
}

// TriageText is the triage run's message: the target's instruction, then
// every alert of the group with its labels (name=value) and annotations.
func TriageText(instruction string, r Record) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(instruction))
	fmt.Fprintf(&b, "\n\nAlertmanager receiver %s reports %d firing alert(s) in group %s:\n", r.Receiver, len(r.Firing()), r.GroupKey)
	for _, k := range r.Alerts {
		if k.Status != Firing {
			continue
		}
		b.WriteString("\n" + alertText(k))
	}
	return strings.TrimRight(b.String(), "\n")
}

// JoinedText tells the thread about an alert that joined the group.
func JoinedText(k Known) string { return "➕ New alert in this group:\n" + alertText(k) }

// EndedText tells the thread an alert resolved while others still fire.
func EndedText(k Known) string {
	return fmt.Sprintf("☑️ %s resolved (%s); the group still fires.", k.Name(), labelList(k.Labels))
}

// RefiredText tells the thread the group fires again.
func RefiredText(r Record) string {
	return fmt.Sprintf("🔥 Firing again: %d alert(s). This incident goes on.", len(r.Firing()))
}

// ResolvedText is what the thread is told when the group resolves.
func ResolvedText(r Record, now time.Time) string {
	return "✅ resolved after " + formatDuration(r.Duration(now))
}

// RetriageText starts a new triage of a group still firing.
func RetriageText(instruction string, r Record, now time.Time) string {
	return fmt.Sprintf("Still firing after %s. ", formatDuration(r.Duration(now))) + TriageText(instruction, r)
}

func alertText(k Known) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- %s (%s) since %s\n", k.Name(), k.Status, k.StartsAt.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "  labels: %s\n", labelList(k.Labels))
	if len(k.Annotations) > 0 {
		b.WriteString("  annotations:\n")
		for _, name := range sortedKeys(k.Annotations) {
			fmt.Fprintf(&b, "    %s: %s\n", name, oneLine(k.Annotations[name]))
		}
	}
	if k.GeneratorURL != "" {
		fmt.Fprintf(&b, "  source: %s\n", k.GeneratorURL)
	}
	return b.String()
}

func labelList(l map[string]string) string {
	parts := make([]string, 0, len(l))
	for _, name := range sortedKeys(l) {
		parts = append(parts, name+"="+l[name])
	}
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// oneLine collapses white space, so an annotation cannot break the layout.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// formatDuration is d to the second ("5m12s"), or "0s".
func formatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d <= 0 {
		return "0s"
	}
	return d.String()
}
