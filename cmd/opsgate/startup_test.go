package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// runMain runs opsgate in-process to its end.
func runMain(t *testing.T, getenv func(string) string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	code = Main(context.Background(), args, strings.NewReader(""), &out, &errOut, getenv)
	return code, out.String(), errOut.String()
}

// startServe runs serve until the test stops it: it waits for the line
// announcing that serve is up (which must match re) and returns the log
// and a stop function that ends serve as SIGTERM does and returns its code.
func startServe(t *testing.T, getenv func(string) string, re *regexp.Regexp, args ...string) (*coretest.SyncBuffer, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var out, errOut coretest.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- Main(ctx, append([]string{"serve"}, args...), nil, &out, &errOut, getenv) }()
	waitLog(t, &errOut, done, re)
	return &errOut, func() int {
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(30 * time.Second):
			t.Fatalf("serve did not stop:\n%s", errOut.String())
			return -1
		}
	}
}

// Issue 9 acceptance 4: an empty token variable for each of Telegram, Slack
// and Discord: serve exits 1 naming key and variable; doctor fails the same
// way; enabled: false starts without it.
func TestEmptyTokenVariableRefusedUnlessDisabled(t *testing.T) {
	tg := telegramtest.New(t)
	sl := slacktest.New(t)
	telegramOn := fmt.Sprintf("telegram:\n  token: %q\n  api_url: %s\n  allowed_users: [42]\n", telegramtest.Token, tg.URL)
	slackOn := fmt.Sprintf("slack:\n  bot_token: %s\n  signing_secret: s3cret\n  api_url: %s\n  channels: [\"*\"]\n", slacktest.BotToken, sl.APIURL())
	for _, p := range []struct {
		platform, key, variable string
		// other is another adapter, so that serve has something to serve
		// once this platform is off.
		other, otherName string
	}{
		{"telegram", "token", "TELEGRAM_BOT_TOKEN", slackOn, "slack"},
		{"slack", "bot_token", "SLACK_BOT_TOKEN", telegramOn, "telegram"},
		{"discord", "token", "DISCORD_BOT_TOKEN", telegramOn, "telegram"},
	} {
		t.Run(p.platform, func(t *testing.T) {
			dir := t.TempDir()
			section := fmt.Sprintf("%s:\n  %s: ${%s}\n", p.platform, p.key, p.variable)
			cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", section)
			want := fmt.Sprintf("config: %s.%s is empty: ${%s} is not set (%s line %d)", p.platform, p.key, p.variable,
				cfg, lineOf(t, cfg, "${"+p.variable+"}"))

			// The variable is unset, or set to nothing (which counts as unset).
			for _, env := range []func(string) string{testEnv(), testEnv(p.variable, "")} {
				code, stdout, stderr := runMain(t, env, "serve", "--config", cfg)
				if code != exitError || stdout != "" || stderr != "opsgate: "+want+"\n" {
					t.Errorf("serve: exit %d\nstdout %q\nstderr %q\nwant exit 1 and stderr %q", code, stdout, stderr, "opsgate: "+want+"\n")
				}
				code, stdout, stderr = runMain(t, env, "doctor", "--config", cfg)
				wantDoctor := "opsgate dev doctor\n" +
					"FAIL  config  " + want + "\n" +
					"              fix: correct that key (or the environment variable it names); nothing else was checked\n" +
					"1 problem(s) found\n"
				if code != exitError || stdout != wantDoctor || stderr != "" {
					t.Errorf("doctor: exit %d\nstdout:\n%s\nstderr %q\nwant exit 1 and stdout:\n%s", code, stdout, stderr, wantDoctor)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
				t.Error("the store was created although the configuration is refused")
			}

			// enabled: false turns the platform off, its token variable set
			// or not: serve starts with the other adapter only.
			up := regexp.MustCompile(`level=INFO msg="opsgate serving".* adapters=\[` + p.otherName + `\] schedules=\[\]`)
			for _, env := range []func(string) string{testEnv(), testEnv(p.variable, "a-token-that-must-not-be-used")} {
				off := fmt.Sprintf("%s:\n  enabled: false\n  %s: ${%s}\n", p.platform, p.key, p.variable) + p.other
				cfg = writeConfig(t, dir, "http://127.0.0.1:1/v1", "", off)
				log, stop := startServe(t, env, up, "--config", cfg)
				if code := stop(); code != exitOK {
					t.Errorf("serve with %s.enabled: false exited %d:\n%s", p.platform, code, log.String())
				}
			}
		})
	}
}

func TestServeRefusesNothingToServe(t *testing.T) {
	const fix = "set telegram.token, slack.bot_token or discord.token, add a schedule, " +
		"or create an API token (opsgate token create --person NAME) for the HTTP API and console; " +
		"--allow-empty starts anyway with only /healthz, /readyz and /metrics to answer, for a standby or a /healthz-only check"
	tests := []struct {
		name, extra, what string
	}{
		{"no section", "",
			"nothing to serve: no chat adapter is enabled, no schedule runs and the HTTP API has no token"},
		{"every adapter disabled", "slack:\n  enabled: false\n  bot_token: xoxb-1\n  app_token: xapp-1\n",
			"nothing to serve: no chat adapter is enabled, no schedule runs and the HTTP API has no token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			model := llmfake.New(t)
			cfg := writeConfig(t, dir, model.URL, "", tt.extra)
			code, stdout, stderr := runMain(t, testEnv(), "serve", "--config", cfg)
			if want := "opsgate: serve: " + tt.what + "; " + fix + "\n"; code != exitError || stdout != "" || stderr != want {
				t.Errorf("serve: exit %d\nstdout %q\nstderr %q\nwant exit 1 and %q", code, stdout, stderr, want)
			}
			if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
				t.Error("serve opened the store although it had nothing to serve")
			}

			// doctor warns: a terminal-only user has nothing to serve.
			code, stdout, _ = runMain(t, testEnv(), "doctor", "--config", cfg)
			if code != exitOK {
				t.Errorf("doctor exited %d, want 0:\n%s", code, stdout)
			}
			mustInOrder(t, stdout,
				"ok    llm     fake-model at "+model.URL+"\n",
				"ok    audit   audit table and its append-only triggers in place; 0 audit entries verified\n",
				"warn  serve   "+tt.what+": opsgate chat works, opsgate serve refuses to start; "+fix+"\n")

			up := regexp.MustCompile(`level=INFO msg="opsgate serving".* adapters=\[\] schedules=\[\]`)
			log, stop := startServe(t, testEnv(), up, "--allow-empty", "--config", cfg)
			if code := stop(); code != exitOK {
				t.Errorf("serve --allow-empty exited %d:\n%s", code, log.String())
			}
			mustContain(t, "log", log.String(), `level=WARN msg="serving nothing (--allow-empty): only /healthz, /readyz and /metrics answer" why="`+tt.what+`"`)
		})
	}
}

func TestServeHelpDocumentsAllowEmpty(t *testing.T) {
	code, stdout, _ := runMain(t, testEnv(), "serve", "-h")
	if code != exitOK {
		t.Fatalf("serve -h exited %d", code)
	}
	mustContain(t, "serve -h", stdout, "Usage: opsgate serve [--allow-empty]", "--allow-empty  start anyway", "standby", "/healthz-only", "at least one API token")
}

// TestMigrateAndDoctorRefuseAlteredAuditLog removes the audit log's
// protection with SQLite's own SQL: migrate, doctor and serve then refuse
// the store, naming what is missing.
func TestMigrateAndDoctorRefuseAlteredAuditLog(t *testing.T) {
	tests := []struct {
		name, alter, missing string
	}{
		{"dropped trigger", `DROP TRIGGER audit_no_update`, "trigger audit_no_update"},
		{"dropped table", `DROP TABLE audit`,
			"table audit, index audit_conv, index audit_run, index audit_approval, trigger audit_no_update, trigger audit_no_delete, trigger audit_no_replace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			model := llmfake.New(t)
			cfg := writeConfig(t, dir, model.URL, "", "")
			if code, _, stderr := runMain(t, testEnv(), "migrate", "--config", cfg); code != exitOK {
				t.Fatalf("first migrate: exit %d: %s", code, stderr)
			}
			db, err := sql.Open("sqlite", filepath.Join(dir, "data", "opsgate.db"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = db.Exec(tt.alter)
			db.Close()
			if err != nil {
				t.Fatalf("%s: %v", tt.alter, err)
			}
			want := "sqlite: schema check: missing " + tt.missing +
				": the audit log is not protected (append-only); the database was changed outside opsgate"

			for _, args := range [][]string{{"migrate"}, {"serve", "--allow-empty"}} {
				code, stdout, stderr := runMain(t, testEnv(), append(args, "--config", cfg)...)
				if code != exitError || stdout != "" || !strings.HasSuffix(stderr, "opsgate: "+want+"\n") {
					t.Errorf("%s: exit %d\nstdout %q\nstderr %q\nwant exit 1 and stderr ending in %q", args[0], code, stdout, stderr, "opsgate: "+want+"\n")
				}
			}
			code, stdout, _ := runMain(t, testEnv(), "doctor", "--config", cfg)
			if code != exitError {
				t.Errorf("doctor exited %d, want 1", code)
			}
			mustInOrder(t, stdout,
				"FAIL  store   "+want+"\n",
				"              fix: find out who changed "+filepath.Join(dir, "data", "opsgate.db")+" and restore it from a backup",
				"1 problem(s) found\n")
			if strings.Contains(stdout, "ok    audit") {
				t.Errorf("doctor reports the audit log as fine:\n%s", stdout)
			}
		})
	}
}

func TestVersionFlag(t *testing.T) {
	_, want, _ := runMain(t, testEnv(), "version")
	if want != "opsgate dev\n" {
		t.Fatalf("opsgate version printed %q", want)
	}
	for _, flag := range []string{"--version", "-version"} {
		code, stdout, stderr := runMain(t, testEnv(), flag)
		if code != exitOK || stdout != want || stderr != "" {
			t.Errorf("opsgate %s: exit %d, stdout %q, stderr %q; want exit 0 and %q", flag, code, stdout, stderr, want)
		}
	}
}
