package policy

import (
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core"
)

// spellingPolicy is the rule of issue 21, item 3: writes to prod* files need
// two people, and not the requester.
const spellingPolicy = `
people:
  alice: {terminal: alice}
  bob:   {terminal: bob}
  carol: {terminal: carol}
roles:
  sre: [alice, bob, carol]
defaults:
  approvers: [sre]
rules:
  - name: prod-writes-need-two
    match: {server: files, tool: write_file, args: {path: "prod*"}}
    action: ask
    quorum: 2
    self_approval: false
`

// Issue 21, acceptance 5: a rule cannot be sidestepped by spelling the
// path another way. The filesystem server serves /srv/ops/sandbox; every
// spelling of sandbox/prod-b.txt meets the rule, with its quorum of two and
// without self-approval; a file elsewhere does not.
func TestRuleSidestepBySpelling(t *testing.T) {
	roots := func(server string) []string {
		if server == "files" {
			return []string{"/srv/ops/sandbox/"}
		}
		return nil
	}
	p := mustParse(t, spellingPolicy, Options{Roots: roots})
	for _, path := range []string{
		"prod-b.txt",
		"./prod-b.txt",
		"/srv/ops/sandbox/prod-b.txt",
		"/srv/ops/sandbox/./prod-b.txt",
		"/srv/ops//sandbox/x/../prod-b.txt",
		"sub/../prod-b.txt",
		"/srv/ops/sandbox/prod/app.yaml",
	} {
		t.Run(path, func(t *testing.T) {
			c := call("files", "write_file", core.RiskWrite, "terminal:alice", `{"path":`+quote(path)+`,"content":"x"}`)
			v := p.Classify(c)
			if v.Rule != "prod-writes-need-two" || v.Quorum != 2 || v.SelfApproval {
				t.Fatalf("Classify(%q) = rule %q, quorum %d, self-approval %v; want prod-writes-need-two, 2, false",
					path, v.Rule, v.Quorum, v.SelfApproval)
			}
			if e := p.MayDecide(proposed(p, c), core.Actor{ID: "terminal:alice"}); e.Allowed {
				t.Errorf("alice may approve her own write to %q", path)
			}
		})
	}
	for _, path := range []string{"/srv/ops/sandbox/staging-prod.txt", "/srv/other/prod-b.txt/../x.txt", "notes/prod-b.txt"} {
		if v := p.Classify(call("files", "write_file", core.RiskWrite, "terminal:alice", `{"path":`+quote(path)+`}`)); v.Rule != "" {
			t.Errorf("Classify(%q) matched %q; want the defaults", path, v.Rule)
		}
	}
	// Without roots the absolute path is outside what the glob can see,
	// which is what policy check warns about.
	bare := mustParse(t, spellingPolicy, Options{})
	if v := bare.Classify(call("files", "write_file", core.RiskWrite, "terminal:alice", `{"path":"./prod-b.txt"}`)); v.Rule == "" {
		t.Errorf("./prod-b.txt without roots: no rule; want prod-writes-need-two (cleaned)")
	}
	w := bare.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], "test.yaml:") || !strings.Contains(w[0], "rules[0].match.args.path") ||
		!strings.Contains(w[0], `"*/prod*"`) {
		t.Errorf("Warnings() = %q; want one naming rules[0].match.args.path and the glob \"*/prod*\"", w)
	}
	// Globs an absolute path cannot sidestep, and arguments that are no
	// paths, are not warned about.
	quiet := mustParse(t, `
rules:
  - {name: a, match: {args: {path: "*/prod*"}}, action: ask}
  - {name: b, match: {args: {file: "/srv/*"}}, action: ask}
  - {name: c, match: {args: {namespace: "prod*"}}, action: ask}
  - {name: d, match: {args: {source: "re:prod"}}, action: ask}
`, Options{})
	if w := quiet.Warnings(); len(w) != 0 {
		t.Errorf("Warnings() = %q; want none", w)
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
