package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sidestepPolicy is issue 21's rule: writes to prod* files need two.
const sidestepPolicy = `people:
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

// Issue 21, acceptance 5 (the commands): policy check keeps exit 0 and
// warns that an absolute path sidesteps "prod*", naming "*/prod*"; with
// the server's roots: configured, explain shows the rule applying to the
// absolute, "./" and cleaned spellings, with its quorum of two.
func TestPolicyCheckWarnsOfSidestep(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	file := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(file, []byte(sidestepPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	sandbox := filepath.Join(dir, "sandbox")
	cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", "policy:\n  file: "+file+"\n"+
		"tools:\n  servers:\n    - name: files\n      url: http://127.0.0.1:1/mcp\n      roots: [./sandbox]\n")
	code, out, errOut := runMain(t, testEnv(), "policy", "check", "--config", cfg)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, "policy check", out, "ok: 3 people, 1 roles, 1 rules\n",
		file+":11: rules[0].match.args.path: warning:", `write "*/prod*"`)
	for _, p := range []string{filepath.Join(sandbox, "prod-b.txt"), "./prod-b.txt", sandbox + "/x/../prod-b.txt"} {
		code, out, errOut := runMain(t, testEnv(), "policy", "explain", "--config", cfg, "--as", "terminal:alice",
			"--server", "files", "--tool", "write_file", "--args", `{"path":"`+p+`"}`)
		if code != exitOK || !strings.Contains(out, "prod-writes-need-two") || !strings.Contains(out, "quorum:        2 people") ||
			!strings.Contains(out, "self-approval: off") {
			t.Errorf("explain %s: exit %d\n%s%s", p, code, out, errOut)
		}
	}
}
