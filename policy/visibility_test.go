package policy

import (
	"slices"
	"strings"
	"testing"
)

const visibilityPolicy = `
people:
  alice: {api: alice, slack: U0ALICE, terminal: alice}
  bob:   {api: bob, terminal: bob}
  carol: {api: carol}
  root:  {terminal: root}
roles:
  sre: [bob]
  admin: [carol]
visibility:
  - roles: [sre]
    conversations: ["slack:T0ACME:C0OPS*", "discord:*", "api:inc-*", "incident:*", "*"]
  - people: [alice]
    conversations: ["api:shared-?"]
`

// Who sees what by the policy alone (docs/design.md §17): rules grant by glob to
// their roles and people; admins see everything; a terminal conversation
// only its own person (whatever identity they use) and admins, even for a
// rule matching "*" or a person who took part.
func TestCanSee(t *testing.T) {
	p, err := Parse("p.yaml", []byte(visibilityPolicy), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		who, key string
		took     bool
		want     bool
	}{
		{"api:bob", "api:inc-7", false, true},
		{"api:bob", "slack:T0ACME:C0OPS42", false, true},
		{"api:bob", "api:private-1", false, true}, // the "*" of the sre rule
		{"api:alice", "api:inc-7", false, false},
		{"api:alice", "api:shared-1", false, true},
		{"api:alice", "api:shared-12", false, false},
		{"api:alice", "api:private-1", true, true}, // took part
		{"api:dave", "api:inc-7", false, false},    // unknown to the policy
		{"api:carol", "api:private-1", false, true},
		{"api:carol", "terminal:root:20250314-1", false, true}, // admin
		{"api:alice", "terminal:alice:20250314-1", false, true},
		{"slack:U0ALICE", "terminal:alice:x", false, true},
		{"api:bob", "terminal:root:20250314-1", false, false},  // "*" grants no terminal
		{"api:alice", "terminal:root:20250314-1", true, false}, // nor taking part
		{"api:dave", "terminal:dave:x", false, false},          // api:dave is not terminal:dave
	} {
		if got := p.CanSee(tc.who, tc.key, tc.took); got != tc.want {
			t.Errorf("CanSee(%s, %s, took part %t) = %t, want %t", tc.who, tc.key, tc.took, got, tc.want)
		}
	}
	if got := p.Identities("api:alice"); !slices.Equal(got, []string{"api:alice", "slack:U0ALICE", "terminal:alice"}) {
		t.Errorf("Identities(api:alice) = %v", got)
	}
	if got := p.Identities("api:dave"); !slices.Equal(got, []string{"api:dave"}) {
		t.Errorf("Identities(api:dave) = %v", got)
	}
	var who []string
	for _, s := range p.WhoCanSee("api:inc-7") {
		who = append(who, s.Who+": "+s.Why)
	}
	if got := strings.Join(who, "; "); !strings.Contains(got, "role admin (carol)") || !strings.Contains(got, `sre (bob): visibility[0] grants "api:inc-*"`) || strings.Contains(got, "alice") {
		t.Errorf("WhoCanSee(api:inc-7) = %s", got)
	}
	who = nil
	for _, s := range p.WhoCanSee("terminal:root:1") {
		who = append(who, s.Who)
	}
	if !slices.Equal(who, []string{"role admin (carol)", "root"}) {
		t.Errorf("WhoCanSee(terminal:root:1) = %v, want the admins and root", who)
	}
}

func TestVisibilityErrors(t *testing.T) {
	head := "people: {alice: {api: alice}}\nroles: {sre: [alice]}\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"terminal", `visibility: [{roles: [sre], conversations: ["terminal:*"]}]`, `p.yaml:3: visibility[0].conversations[0]: terminal conversations are seen only by their own person and admins`},
		{"unknown role", `visibility: [{roles: [ops], conversations: ["api:*"]}]`, `p.yaml:3: visibility[0].roles[0]: unknown role or person "ops"`},
		{"no one", `visibility: [{conversations: ["api:*"]}]`, `p.yaml:3: visibility[0]: names no roles or people`},
		{"no conversations", `visibility: [{roles: [sre]}]`, `p.yaml:3: visibility[0]: names no conversations`},
		{"unknown key", `visibility: [{roles: [sre], convs: ["api:*"]}]`, `p.yaml:3: visibility[0].convs: unknown key`},
		{"bad glob", `visibility: [{roles: [sre], conversations: ["api:[x"]}]`, `p.yaml:3: visibility[0].conversations[0]: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(head+tc.yaml+"\n"), Options{})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("Parse = %v, want %s…", err, tc.want)
			}
		})
	}
}
