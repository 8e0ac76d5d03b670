package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/internal/golden"
)

// pkgDir is this package's directory: tests change the working directory.
var pkgDir, _ = os.Getwd()

// copyExamplePolicy puts configs/policy.example.yaml into dir as
// policy.yaml.
func copyExamplePolicy(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(pkgDir, "..", "..", "configs", "policy.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Issue 10, acceptance 9 (the command): `opsgate policy check bad.yaml`
// prints the problem as FILE:LINE: key: what is wrong and exits 1.
func TestPolicyCheckBadFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	bad := filepath.Join(dir, "bad.yaml")
	src := "people:\n  alice: {slack: U0ALICE}\nrules:\n  - name: deletes\n    match: {tool: \"[\"}\n    action: deny\n"
	if err := os.WriteFile(bad, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runMain(t, testEnv(), "policy", "check", bad)
	want := bad + `:5: rules[0].match.tool: bad glob "[": "[" is not closed by "]"` + "\n"
	if code != exitError || errOut != want || out != "" {
		t.Errorf("exit %d\nstdout %q\nstderr %q\nwant stderr %q", code, out, errOut, want)
	}
}

func TestPolicyCheck(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	file := copyExamplePolicy(t, dir)
	cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", "policy:\n  file: "+file+"\n")
	for _, tc := range []struct {
		name string
		args []string
		out  string
	}{
		{"a file", []string{"policy", "check", file}, "ok: 3 people, 2 roles, 3 rules\n"},
		{"policy.file of the configuration", []string{"policy", "check", "--config", cfg}, "ok: 3 people, 2 roles, 3 rules\n"},
		{"flags after the file", []string{"policy", "check", file, "--config", cfg}, "ok: 3 people, 2 roles, 3 rules\n"},
		{"no policy file", []string{"policy", "check"}, "ok: no policy file (policy.file is not set): the requester or the platform's approvers decide\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.args) == 2 {
				t.Chdir(t.TempDir()) // no ./opsgate.yaml
			}
			code, out, errOut := runMain(t, testEnv(), tc.args...)
			if code != exitOK || out != tc.out {
				t.Errorf("exit %d\nstdout %q\nstderr %s", code, out, errOut)
			}
		})
	}
	if code, _, errOut := runMain(t, testEnv(), "policy", "check", file, "extra"); code != exitUsage || !strings.Contains(errOut, `unexpected argument "extra"`) {
		t.Errorf("two files: exit %d, %s", code, errOut)
	}
	if code, _, errOut := runMain(t, testEnv(), "policy", "check", filepath.Join(dir, "none.yaml")); code != exitError ||
		errOut != filepath.Join(dir, "none.yaml")+": cannot read the policy file: no such file or directory\n" {
		t.Errorf("missing file: exit %d, %s", code, errOut)
	}
}

// Issue 10, acceptance 11: `policy explain` prints the matching rule, the
// action, who may approve and the quorum for representative calls
// (golden output in testdata/policy_explain.golden; -update rewrites it).
func TestPolicyExplainGolden(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	copyExamplePolicy(t, dir)
	cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", "slack:\n  bot_token: xoxb-test\n  app_token: xapp-test\n  approvers: [U0BOB]\n")
	cases := [][]string{
		{"--as", "slack:U0BOB", "--server", "k8s", "--tool", "pods_delete", "--args", `{"namespace":"prod"}`, "--risk", "destructive"},
		{"--as", "slack:U0BOB", "--server", "k8s", "--tool", "deployments_scale", "--args", `{"namespace":"prod-eu","name":"api","replicas":3}`},
		{"--as", "telegram:12345678", "--server", "k8s", "--tool", "secrets_get", "--args", `{"name":"db"}`, "--risk", "read"},
		{"--as", "terminal:alice", "--server", "k8s", "--tool", "pods_list", "--args", `{"namespace":"prod"}`, "--risk", "read"},
	}
	var got strings.Builder
	for _, c := range cases {
		args := append([]string{"policy", "explain", "--policy", "policy.yaml"}, c...)
		code, out, errOut := runMain(t, testEnv(), args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", c, code, errOut)
		}
		got.WriteString("$ opsgate " + shellJoin(args) + "\n" + out + "\n")
	}
	// Without a policy file: the requester or the platform's approvers.
	args := []string{"policy", "explain", "--config", filepath.Base(cfg), "--as", "slack:U0ALICE", "--server", "k8s", "--tool", "pods_delete"}
	code, out, errOut := runMain(t, testEnv(), args...)
	if code != exitOK {
		t.Fatalf("no policy: exit %d: %s", code, errOut)
	}
	got.WriteString("$ opsgate " + shellJoin(args) + "\n" + out)

	golden.Check(t, filepath.Join(pkgDir, "testdata", "policy_explain.golden"), []byte(got.String()))
}

// shellJoin writes args as a shell command line, so that the golden file
// shows commands one can paste.
func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = a
		if strings.ContainsAny(a, ` {}"*?$'`) {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(quoted, " ")
}

func TestPolicyExplainRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	copyExamplePolicy(t, dir)
	base := []string{"policy", "explain", "--policy", "policy.yaml"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no identity", []string{"--server", "k8s", "--tool", "t"}, exitUsage, `--as: want an identity platform:id, such as slack:U0BOB (got "")`},
		{"raw id", []string{"--as", "U0BOB", "--server", "k8s", "--tool", "t"}, exitUsage, `(got "U0BOB")`},
		{"no tool", []string{"--as", "slack:U0BOB", "--server", "k8s"}, exitUsage, "--server and --tool are required"},
		{"bad risk", []string{"--as", "slack:U0BOB", "--server", "k8s", "--tool", "t", "--risk", "high"}, exitUsage, `--risk: want read, write or destructive (got "high")`},
		{"bad args", []string{"--as", "slack:U0BOB", "--server", "k8s", "--tool", "t", "--args", "{nope"}, exitUsage, "--args: canonical json:"},
		{"bad policy", []string{"--as", "slack:U0BOB", "--server", "k8s", "--tool", "t", "--policy", "gone.yaml"}, exitError, "gone.yaml: cannot read the policy file"},
		{"unknown subcommand", nil, exitUsage, `opsgate policy: unknown command "reload"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{}, base...), tc.args...)
			if tc.args == nil {
				args = []string{"policy", "reload"}
			}
			code, _, errOut := runMain(t, testEnv(), args...)
			if code != tc.code || !strings.Contains(errOut, tc.err) {
				t.Errorf("exit %d, want %d; stderr:\n%s\nwant it to contain %q", code, tc.code, errOut, tc.err)
			}
		})
	}
}

// doctor validates the policy file and warns about asks no approver can
// answer on the enabled platforms.
func TestDoctorChecksPolicy(t *testing.T) {
	dir := t.TempDir()
	model := llmfake.New(t)
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("rules:\n  - name: x\n    match: {tool: \"[\"}\n    action: deny\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, model.URL, "", "policy:\n  file: "+bad+"\n")
	code, stdout, _ := runMain(t, testEnv(), "doctor", "--config", cfg)
	if code != exitError {
		t.Errorf("doctor with a bad policy exited %d, want 1", code)
	}
	mustContain(t, "doctor", stdout, "FAIL  policy  "+bad+":3: rules[0].match.tool", "fix: correct the file; opsgate policy check prints the same message")

	lonely := filepath.Join(dir, "lonely.yaml")
	if err := os.WriteFile(lonely, []byte("people:\n  bob: {telegram: \"87654321\"}\nrules:\n  - name: prod\n    match: {server: k8s}\n    action: ask\n    approvers: [bob]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg = writeConfig(t, dir, model.URL, "", "policy:\n  file: "+lonely+"\n")
	code, stdout, _ = runMain(t, testEnv(), "doctor", "--config", cfg)
	if code != exitOK {
		t.Errorf("doctor with an unreachable rule exited %d, want 0 (a warning):\n%s", code, stdout)
	}
	mustContain(t, "doctor", stdout, "ok    policy  "+lonely+": 1 people, 0 roles, 1 rules",
		"warn  policy  rule prod: no approver has an identity on terminal, so its requests can only expire")
}

// Issue 10, acceptance 9 (start-up): with a malformed policy file neither
// serve nor chat starts; both name the file, the line and the key.
func TestBadPolicyFileStopsStartup(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(bad, []byte("defaults:\n  quorum: two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tg := telegramtest.New(t)
	cfg := writeConfig(t, dir, llmfake.New(t).URL, "", "policy:\n  file: "+bad+"\n"+telegramConfig(tg))
	want := bad + `:2: defaults.quorum: must be a whole number (got "two")`
	for _, args := range [][]string{{"serve"}, {"chat", "-m", "hello"}} {
		code, _, stderr := runMain(t, testEnv(), append(args, "--config", cfg)...)
		if code != exitError || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 naming %q", args[0], code, stderr, want)
		}
	}
	if calls := tg.Calls(); len(calls) != 0 {
		t.Errorf("serve called Telegram (%d calls) with a bad policy", len(calls))
	}
}
