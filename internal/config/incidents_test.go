package config

import (
	"strings"
	"testing"
	"time"
)

// Issue 24: the incidents section loads with its defaults, and each
// malformed target is one error naming the key and its line.
func TestIncidentsConfig(t *testing.T) {
	dir := inEmptyDir(t)
	writeFile(t, dir, "c.yaml", `tools:
  servers:
    - {name: k8s, url: http://k8s/mcp}
incidents:
  targets:
    - match: {severity: critical, namespace: "prod*"}
      to: slack:C0OPS
      approvers: [sre]
      toolsets: [k8s]
      triage: Look at it.
    - to: telegram:-100123
`)
	c, err := Load("c.yaml", env())
	if err != nil {
		t.Fatal(err)
	}
	inc := c.Incidents
	if !inc.On() || len(inc.Targets) != 2 || inc.RetriggerAfter != time.Hour {
		t.Fatalf("incidents = %+v, want two targets and retrigger_after 1h", inc)
	}
	if got := inc.Targets[0]; got.Match["namespace"] != "prod*" || got.To != "slack:C0OPS" || got.Triage != "Look at it." || got.Approvers[0] != "sre" {
		t.Errorf("targets[0] = %+v", got)
	}
	if (Config{}).Incidents.On() {
		t.Error("no targets, yet incidents are on")
	}

	tests := []struct{ name, body, want string }{
		{"to without platform", "incidents:\n  targets:\n    - {to: C0OPS}",
			`config: incidents.targets[0].to: "C0OPS" is not PLATFORM:ID with PLATFORM one of slack, discord, telegram (e.g. slack:C0OPS) (c.yaml line 3)`},
		{"to unknown platform", "incidents:\n  targets:\n    - {to: 'matrix:!room'}",
			`config: incidents.targets[0].to: "matrix:!room" is not PLATFORM:ID with PLATFORM one of slack, discord, telegram (e.g. slack:C0OPS) (c.yaml line 3)`},
		{"bad glob", "incidents:\n  targets:\n    - {to: 'slack:C1', match: {severity: '[crit'}}",
			`config: incidents.targets[0].match.severity: "[crit" is not a glob (* and ? match characters): syntax error in pattern (c.yaml line 3)`},
		{"unknown toolset", "incidents:\n  targets:\n    - {to: 'slack:C1', toolsets: [helm]}",
			`config: incidents.targets[0].toolsets[0]: "helm" is not the name of a server in tools.servers (c.yaml line 3)`},
		{"retrigger zero", "incidents:\n  retrigger_after: 0s\n  targets:\n    - {to: 'slack:C1'}",
			`config: incidents.retrigger_after: must be positive, e.g. 1h (c.yaml line 2)`},
		{"retrigger not a duration", "incidents:\n  retrigger_after: hourly",
			`config: incidents.retrigger_after: "hourly" is not a duration (use a number with a unit, e.g. 30m or 1h) (c.yaml line 2)`},
		{"unknown key", "incidents:\n  targets:\n    - {to: 'slack:C1', severity: critical}", "config: incidents.targets[0]"},
		{"match not a map", "incidents:\n  targets:\n    - {to: 'slack:C1', match: critical}", "config: incidents.targets[0].match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := inEmptyDir(t)
			writeFile(t, dir, "c.yaml", tt.body)
			_, err := Load("c.yaml", env())
			if err == nil {
				t.Fatalf("Load succeeded, want %q", tt.want)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("err  = %q\nwant = %q", err, tt.want)
			}
		})
	}
}
