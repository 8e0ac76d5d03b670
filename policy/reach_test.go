package policy

import (
	"slices"
	"testing"
)

func TestUnreachableApprovers(t *testing.T) {
	p, err := Parse("p.yaml", []byte(`
people:
  alice: {slack: U0ALICE}
  bob:   {telegram: "87654321"}
roles:
  tg: [bob]
defaults:
  self_approval: false
rules:
  - name: two-on-slack
    match: {server: k8s}
    action: ask
    approvers: [alice]
  - name: telegram-only
    match: {server: helm}
    action: ask
    approvers: [tg]
  - name: no-deletes
    match: {tool: "*_delete"}
    action: deny
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		platforms []string
		want      []string
	}{
		{[]string{"slack", "telegram"}, []string{"defaults"}},
		{[]string{"slack"}, []string{"defaults", "rule telegram-only"}},
		{[]string{"terminal"}, []string{"defaults", "rule two-on-slack", "rule telegram-only"}},
	} {
		if got := p.Unreachable(tt.platforms); !slices.Equal(got, tt.want) {
			t.Errorf("Unreachable(%v) = %v, want %v", tt.platforms, got, tt.want)
		}
	}
	// Without a file, the requester may approve: always reachable.
	none, err := Load("", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := none.Unreachable(nil); len(got) != 0 {
		t.Errorf("Unreachable without a file = %v, want none", got)
	}
}
