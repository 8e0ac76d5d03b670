package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/opsgate/opsgate/core"
)

// Issue 10, acceptance 9 (first part): each malformed policy file gives one
// clear error naming the file, the line and the key; nothing is loaded.
func TestPolicyErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file, want string
	}{
		{"unknown key", "testdata/unknown-key.yaml",
			"testdata/unknown-key.yaml:7: rules[0].approver: unknown key (known: name, match, action, reason, approvers, quorum, self_approval, notify)"},
		{"bad glob", "testdata/bad-glob.yaml",
			`testdata/bad-glob.yaml:6: rules[1].match.tool: bad glob "[": "[" is not closed by "]"`},
		{"bad regex", "testdata/bad-regex.yaml",
			"testdata/bad-regex.yaml:6: rules[0].match.args.namespace: bad regex \"re:prod-(eu|us\": error parsing regexp: missing closing ): `prod-(eu|us`"},
		{"unknown role", "testdata/unknown-role.yaml",
			`testdata/unknown-role.yaml:6: defaults.approvers[1]: unknown role or person "oncall" (roles: sre; people: alice)`},
		{"quorum too large", "testdata/quorum-too-large.yaml",
			"testdata/quorum-too-large.yaml:11: rules[0].quorum: quorum 3 is larger than the 2 people who may approve (alice, bob)"},
		{"duplicate person identity", "testdata/duplicate-identity.yaml",
			"testdata/duplicate-identity.yaml:5: people.bob.telegram: identity telegram:12345678 already belongs to alice (line 2); one identity is one person"},
		{"wrong type", "testdata/wrong-type.yaml",
			`testdata/wrong-type.yaml:4: defaults.quorum: must be a whole number (got "two")`},
		{"unreadable file", filepath.Join(dir, "missing.yaml"),
			filepath.Join(dir, "missing.yaml") + ": cannot read the policy file: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Load(tc.file, Options{})
			if p != nil {
				t.Errorf("Load returned a policy along with the error")
			}
			if err == nil {
				t.Fatalf("Load(%s) succeeded; want %q", tc.file, tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("Load(%s):\n got %s\nwant %s", tc.file, err, tc.want)
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.File != tc.file {
				t.Errorf("error %T does not name the file %s", err, tc.file)
			}
		})
	}
}

// TestLoadRefusesMore covers the other ways a file can be wrong, each
// named by its line and key.
func TestLoadRefusesMore(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"syntax", "rules:\n  - name: x\n   action: ask\n", "p.yaml:1: syntax: did not find expected '-' indicator"},
		{"unclosed quote", "defaults:\n  approvers: [\"sre]\n", "p.yaml:2: syntax: "},
		{"top-level list", "- a\n", "p.yaml:1: (top level): must be a mapping"},
		{"unknown section", "peple: {}\n", "p.yaml:1: peple: unknown key (known: people, roles, defaults, rules, redact, limits, visibility)"},
		{"allow action", "rules:\n  - name: x\n    action: allow\n", `p.yaml:3: rules[0].action: must be deny or ask (got "allow"); no rule can let a tool run without approval`},
		{"read action", "rules:\n  - name: x\n    action: read\n", `p.yaml:3: rules[0].action: must be deny or ask (got "read")`},
		{"missing action", "rules:\n  - name: x\n", "p.yaml:2: rules[0].action: missing: want deny or ask"},
		{"missing name", "rules:\n  - action: ask\n", "p.yaml:2: rules[0].name: missing"},
		{"duplicate rule", "rules:\n  - {name: x, action: ask}\n  - {name: x, action: deny}\n", `p.yaml:3: rules[1].name: rule "x" is already defined on line 2`},
		{"deny with approvers", "people: {a: {slack: U1}}\nrules:\n  - {name: x, action: deny, approvers: [a]}\n", "p.yaml:3: rules[0].approvers: only an ask rule has approvers"},
		{"quorum zero", "defaults: {quorum: 0}\n", "p.yaml:1: defaults.quorum: must be at least 1"},
		{"defaults quorum", "people: {a: {slack: U1}}\ndefaults: {approvers: [a], quorum: 2}\n", "p.yaml:2: defaults.quorum: quorum 2 is larger than the 1 person who may"},
		{"inherited quorum", "people: {a: {slack: U1}, b: {slack: U2}}\ndefaults: {approvers: [a, b], quorum: 2}\nrules:\n  - {name: x, action: ask, approvers: [a]}\n", "p.yaml:4: rules[0].approvers: quorum 2 is larger than the 1 person who may"},
		{"bool as text", "people: {a: {slack: yes}}\n", ""},
		{"self_approval text", "defaults: {self_approval: maybe}\n", `p.yaml:1: defaults.self_approval: must be true or false (got "maybe")`},
		{"unknown risk", "rules:\n  - {name: x, action: ask, match: {risk: [dangerous]}}\n", `p.yaml:2: rules[0].match.risk[0]: unknown risk "dangerous"`},
		{"empty risk", "rules:\n  - {name: x, action: ask, match: {risk: []}}\n", "p.yaml:2: rules[0].match.risk: an empty list matches nothing"},
		{"empty who", "rules:\n  - {name: x, action: ask, match: {who: []}}\n", "p.yaml:2: rules[0].match.who: an empty list matches nobody"},
		{"unknown who", "rules:\n  - {name: x, action: ask, match: {who: [sre]}}\n", `p.yaml:2: rules[0].match.who[0]: unknown role or person "sre"`},
		{"unknown person in role", "roles: {sre: [alice]}\n", `p.yaml:1: roles.sre[0]: unknown person "alice" (people: none)`},
		{"role named like a person", "people: {a: {slack: U1}}\nroles: {a: [a]}\n", `p.yaml:2: roles.a: "a" is also a person`},
		{"bad identity", "defaults: {approvers: [\"irc:bob\"]}\n", `p.yaml:1: defaults.approvers[0]: "irc:bob" is not an identity`},
		{"unknown platform", "people: {a: {irc: bob}}\n", "p.yaml:1: people.a.irc: unknown key (known: slack, telegram, discord, terminal, api)"},
		{"notify without chat", "people: {a: {terminal: a}}\nrules:\n  - {name: x, action: ask, notify: [a]}\n", `p.yaml:3: rules[0].notify[0]: "a" has no slack, telegram or discord identity to notify`},
		{"bad redact pattern", "redact: {patterns: ['corp-[']}\n", `p.yaml:1: redact.patterns[0]: bad regex "corp-["`},
		{"negative limit", "limits: {runs_per_person_per_minute: -1}\n", "p.yaml:1: limits.runs_per_person_per_minute: must be at least 0"},
		{"key twice", "defaults: {quorum: 1, quorum: 2}\n", "p.yaml:1: defaults.quorum: set twice (first on line 1)"},
		{"bad arg path", "rules:\n  - {name: x, action: ask, match: {args: {a..b: x}}}\n", `p.yaml:2: rules[0].match.args.a..b: bad argument path`},
		{"name with colon", "people: {\"slack:U1\": {slack: U1}}\n", `p.yaml:1: people.slack:U1: a name must not contain ":"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tc.yaml), Options{})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse succeeded; want %q", tc.want)
			}
			if got := err.Error(); len(got) < len(tc.want) || got[:len(tc.want)] != tc.want {
				t.Errorf("got  %s\nwant %s…", got, tc.want)
			}
		})
	}
}

func TestLoadUnreadableDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(dir, Options{})
	if err == nil || err.Error() != dir+": cannot read the policy file: is a directory" {
		t.Fatalf("Load(dir) = %v", err)
	}
}

func TestEmptyFileIsDefaults(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(p, []byte("# nothing yet\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pol, err := Load(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n, r, k := pol.Counts(); n+r+k != 0 || !pol.Redact().ModelInput {
		t.Errorf("empty file: counts %d %d %d, model_input %v", n, r, k, pol.Redact().ModelInput)
	}
}

// Issue 22 review finding 3: a policy file's problem is an invalid input
// in core's one table of error kinds.
func TestPolicyErrorIsKindInvalid(t *testing.T) {
	err := fmt.Errorf("load: %w", &Error{File: "policy.yaml", Line: 3, Key: "rules[0].match.tool", Msg: "empty"})
	if got := core.KindOf(err); got != core.KindInvalid {
		t.Errorf("KindOf(%v) = %s, want invalid", err, got)
	}
}
