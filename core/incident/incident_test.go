package incident

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func note(status string, alerts ...Alert) Notification {
	return Notification{Version: "4", GroupKey: `{}:{alertname="Down"}`, Status: status, Receiver: "opsgate", Alerts: alerts}
}

func alert(fp, status string, start time.Time) Alert {
	a := Alert{Fingerprint: fp, Status: status, StartsAt: start,
		Labels:      map[string]string{"alertname": "Down", "severity": "critical", "pod": fp},
		Annotations: map[string]string{"summary": "pod " + fp + " is down"}}
	if status == Resolved {
		a.EndsAt = start.Add(5 * time.Minute)
	}
	return a
}

func TestParseRefusesWhatIsNotAVersion4Notification(t *testing.T) {
	good := `{"version":"4","groupKey":"g","status":"firing","receiver":"r","alerts":[{"status":"firing","labels":{"alertname":"A"}}],"newField":1}`
	n, err := Parse([]byte(good))
	if err != nil || n.Alerts[0].Fingerprint == "" {
		t.Fatalf("Parse(good) = %+v, %v; want a fingerprint filled in", n, err)
	}
	for _, bad := range []string{
		`{"version":"4"`, `[]`, `{"version":"3","groupKey":"g","status":"firing","alerts":[{"status":"firing","labels":{"a":"b"}}]}`,
		`{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"a":"b"}}]}`,
		`{"version":"4","groupKey":"g","status":"burning","alerts":[{"status":"firing","labels":{"a":"b"}}]}`,
		`{"version":"4","groupKey":"g","status":"firing","alerts":[]}`,
		`{"version":"4","groupKey":"g","status":"firing","alerts":[{"status":"firing"}]}`,
	} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%s) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestRouteFirstMatchWins(t *testing.T) {
	targets := []Target{
		{Match: map[string]string{"severity": "warning"}, To: "slack:CWARN"},
		{Match: map[string]string{"severity": "crit*", "namespace": "prod*"}, To: "slack:CPROD"},
		{Match: map[string]string{"severity": "critical"}, To: "slack:COPS"},
		{To: "telegram:1"},
	}
	n := note(Firing, alert("a", Firing, time.Now()))
	if got := Route(targets, n); got != 2 {
		t.Errorf("Route = %d, want 2 (no namespace label: target 1 does not match)", got)
	}
	n.Alerts[0].Labels["namespace"] = "prod-eu"
	if got := Route(targets, n); got != 1 {
		t.Errorf("Route = %d, want 1", got)
	}
	if got := Route(targets[:1], n); got != -1 {
		t.Errorf("Route = %d, want -1 (unmatched)", got)
	}
}

func TestDecideOneIncidentPerGroupUntilRetrigger(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	hour := time.Hour
	p := Decide(nil, note(Firing, alert("a", Firing, t0)), 0, "slack:C1", t0, hour)
	if !p.Open || !p.Triage || p.Next.Seq != 1 || p.Next.Key != Key(p.Next.GroupKey, 1) || !strings.HasPrefix(p.Next.Key, "incident:") {
		t.Fatalf("first notification: %+v", p)
	}
	r := p.Next
	r.Thread, r.Root, r.Version = "slack:T:C1:1.0", "C1/1.0", 1

	// A repeat: nothing new.
	p = Decide(&r, note(Firing, alert("a", Firing, t0)), 0, "slack:C1", t0.Add(10*time.Minute), hour)
	if p.Open || p.Triage || len(p.Joined) != 0 || p.Next.Notifications != 2 {
		t.Fatalf("repeat: %+v", p)
	}
	// A second alert joins.
	r = p.Next
	p = Decide(&r, note(Firing, alert("a", Firing, t0), alert("b", Firing, t0.Add(time.Minute))), 0, "slack:C1", t0.Add(11*time.Minute), hour)
	if p.Open || p.Triage || len(p.Joined) != 1 || p.Joined[0].Fingerprint != "b" {
		t.Fatalf("join: %+v", p)
	}
	// Resolved.
	r = p.Next
	p = Decide(&r, note(Resolved, alert("a", Resolved, t0), alert("b", Resolved, t0.Add(time.Minute))), 0, "slack:C1", t0.Add(12*time.Minute), hour)
	if !p.Resolved || p.Next.Status != Resolved || p.Next.Duration(t0.Add(time.Hour)) != 6*time.Minute {
		t.Fatalf("resolve: %+v (duration %s)", p, p.Next.Duration(t0))
	}
	if got := ResolvedText(p.Next, t0); got != "✅ resolved after 6m0s" {
		t.Errorf("ResolvedText = %q", got)
	}
	// The same resolve again: ignored.
	r = p.Next
	if p2 := Decide(&r, note(Resolved, alert("a", Resolved, t0)), 0, "slack:C1", t0.Add(13*time.Minute), hour); !p2.Ignore {
		t.Errorf("second resolve: %+v, want Ignore", p2)
	}
	// Firing again within the hour: the same incident goes on.
	p = Decide(&r, note(Firing, alert("a", Firing, t0.Add(20*time.Minute))), 0, "slack:C1", t0.Add(20*time.Minute), hour)
	if p.Open || !p.Refired || p.Next.Key != r.Key || p.Next.Status != Firing {
		t.Fatalf("refire: %+v", p)
	}
	// Resolved again, then firing after the hour: a new incident.
	r = p.Next
	r = Decide(&r, note(Resolved, alert("a", Resolved, t0.Add(20*time.Minute))), 0, "slack:C1", t0.Add(25*time.Minute), hour).Next
	p = Decide(&r, note(Firing, alert("a", Firing, t0.Add(2*time.Hour))), 0, "slack:C1", t0.Add(2*time.Hour), hour)
	if !p.Open || !p.Triage || p.Next.Seq != 2 || p.Next.Key == r.Key {
		t.Fatalf("new firing after retrigger_after: %+v", p)
	}
	// A group still firing after the hour is triaged again, in place.
	r = p.Next
	p = Decide(&r, note(Firing, alert("a", Firing, t0.Add(2*time.Hour))), 0, "slack:C1", t0.Add(3*time.Hour+time.Second), hour)
	if p.Open || !p.Triage || p.Next.Key != r.Key {
		t.Fatalf("still firing after retrigger_after: %+v", p)
	}
	// A resolve of a group never seen starts nothing.
	if p := Decide(nil, note(Resolved, alert("z", Resolved, t0)), 0, "slack:C1", t0, hour); !p.Ignore {
		t.Errorf("resolve of an unknown group: %+v", p)
	}
}

func TestTexts(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	a := alert("a", Firing, t0)
	a.GeneratorURL = "http://prometheus/graph?g0.expr=up"
	a.Annotations["description"] = "It has been\ndown for a while."
	r := Decide(nil, note(Firing, a), 0, "slack:C1", t0.Add(time.Minute), time.Hour).Next
	root := RootText(r, t0)
	for _, want := range []string{"🔥 FIRING: Down (severity critical)", "Summary: pod a is down", "Description: It has been down for a while.",
		"Firing: 1 of 1 alerts · notifications: 1", "Started: 2026-11-28 04:00:00 UTC", "Source: http://prometheus/graph?g0.expr=up", r.Key} {
		if !strings.Contains(root, want) {
			t.Errorf("root lacks %q:\n%s", want, root)
		}
	}
	tri := TriageText("Look.", r)
	for _, want := range []string{"Look.", "labels: alertname=Down, pod=a, severity=critical", "summary: pod a is down", "receiver opsgate"} {
		if !strings.Contains(tri, want) {
			t.Errorf("triage text lacks %q:\n%s", want, tri)
		}
	}
}
