package config

import (
	"github.com/opsgate/opsgate/memory"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// env returns a getenv over a fixed map, so tests never touch the process
// environment.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// inEmptyDir runs the test in a fresh directory so ./opsgate.yaml is absent.
func inEmptyDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	return dir
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

var ignoreInternal = cmpopts.IgnoreUnexported(Config{})

func TestLoadDefaultsWithoutFile(t *testing.T) {
	tests := []struct {
		name string
		env  func(string) string
		llm  LLM
	}{
		{
			name: "nothing set uses local Ollama",
			env:  env(),
			llm:  LLM{BaseURL: OllamaBaseURL, Model: OllamaModel, MaxIterations: 25, ContextWindowMessages: 40, ContextTokens: 100000},
		},
		{
			name: "OPENAI_API_KEY selects OpenAI",
			env:  env("OPENAI_API_KEY", "sk-test"),
			llm:  LLM{BaseURL: OpenAIBaseURL, APIKey: "sk-test", Model: OpenAIModel, MaxIterations: 25, ContextWindowMessages: 40, ContextTokens: 100000},
		},
		{
			name: "OPENAI_BASE_URL with its key",
			env:  env("OPENAI_API_KEY", "sk-proxy", "OPENAI_BASE_URL", "http://litellm:4000/v1"),
			llm:  LLM{BaseURL: "http://litellm:4000/v1", APIKey: "sk-proxy", Model: OpenAIModel, MaxIterations: 25, ContextWindowMessages: 40, ContextTokens: 100000},
		},
		{
			name: "OPENAI_BASE_URL pointing at Ollama",
			env:  env("OPENAI_BASE_URL", "http://gpu-box:11434/v1"),
			llm:  LLM{BaseURL: "http://gpu-box:11434/v1", Model: OllamaModel, MaxIterations: 25, ContextWindowMessages: 40, ContextTokens: 100000},
		},
		{
			name: "OPSGATE_LLM_BASE_URL elsewhere does not receive OPENAI_API_KEY",
			env:  env("OPENAI_API_KEY", "sk-secret", "OPSGATE_LLM_BASE_URL", "https://vllm.internal/v1"),
			llm:  LLM{BaseURL: "https://vllm.internal/v1", Model: OpenAIModel, MaxIterations: 25, ContextWindowMessages: 40, ContextTokens: 100000},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inEmptyDir(t)
			c, err := Load("", tt.env)
			if err != nil {
				t.Fatal(err)
			}
			want := Defaults()
			want.LLM = tt.llm
			want.LLM.Timeout, want.LLM.StreamIdleTimeout = time.Minute, time.Minute
			if diff := cmp.Diff(want, *c, ignoreInternal); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadFileWithExpansion(t *testing.T) {
	dir := inEmptyDir(t)
	writeFile(t, dir, "opsgate.yaml", `
llm:
  base_url: ${LLM_URL}
  api_key: ${KEY}
  model: qwen3:8b
  max_iterations: ${ITER}
  context_window_messages: ${UNSET_NUMBER}
  reasoning_effort: low
  timeout: 90s
  stream_idle_timeout: ${IDLE}
store:
  url: ./data/my.db
memory:
  enabled: false
session:
  queue_mode: followup
tools:
  call_timeout: 90s
  servers:
    - name: k8s
      command: npx
      args: ["-y", "kubernetes-mcp-server@latest"]
      env: {KUBECONFIG: "${HOME}/.kube/config"}
    - name: jenkins
      url: http://jenkins-mcp:8080/mcp
      headers: {Authorization: "Bearer ${JENKINS_TOKEN}", X-Price: "$$5 and pa$word"}
      call_timeout: 10m
approvals:
  expiry: 10m
policy:
  file: ./policy.yaml
telegram:
  enabled: false
  token: ${UNDEFINED_TOKEN}
  allowed_users: [12345678]
discord:
  enabled: ${DISCORD_ENABLED}
  token: discord-token
  guilds: [1200000000000000001]
schedules:
  - name: morning-health
    cron: "0 9 * * 1-5"
    prompt: Summarise cluster health.
    target: slack:C0123456
`)
	c, err := Load("", env("LLM_URL", "http://llm:8000/v1", "KEY", "k-1", "ITER", "7", "HOME", "/home/sre", "JENKINS_TOKEN", "j-2", "IDLE", "45s"))
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	want.File = "opsgate.yaml"
	want.LLM = LLM{BaseURL: "http://llm:8000/v1", APIKey: "k-1", Model: "qwen3:8b", MaxIterations: 7, ContextWindowMessages: 40, ReasoningEffort: "low",
		Timeout: 90 * time.Second, StreamIdleTimeout: 45 * time.Second, ContextTokens: 100000}
	want.Store.URL = "./data/my.db"
	want.Memory.Enabled = false
	want.Session.QueueMode = "followup"
	want.Tools = Tools{
		DefaultToolsets: []string{"k8s", "jenkins"},
		CallTimeout:     90 * time.Second,
		Servers: []MCPServer{
			{Name: "k8s", Command: "npx", Args: []string{"-y", "kubernetes-mcp-server@latest"}, Env: map[string]string{"KUBECONFIG": "/home/sre/.kube/config"}},
			{Name: "jenkins", URL: "http://jenkins-mcp:8080/mcp", Headers: map[string]string{"Authorization": "Bearer j-2", "X-Price": "$5 and pa$word"}, CallTimeout: 10 * time.Minute},
		},
	}
	want.Approvals.Expiry = 10 * time.Minute
	want.Policy.File = "./policy.yaml"
	off := false
	want.Telegram.Enabled = &off
	want.Telegram.AllowedUsers = []int64{12345678}
	want.Discord.Token = "discord-token"
	want.Discord.Guilds = []string{"1200000000000000001"}
	want.Schedules = []Schedule{{Name: "morning-health", Cron: "0 9 * * 1-5", Prompt: "Summarise cluster health.", Target: "slack:C0123456"}}
	if diff := cmp.Diff(want, *c, ignoreInternal); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if got := c.Adapters(); !cmp.Equal(got, []string{"discord"}) {
		t.Errorf("Adapters() = %q, want [discord]: telegram is off, and an unset ${VAR} leaves discord.enabled unset", got)
	}
	if loc, err := memory.Parse(c.Store.URL); err != nil || loc != (memory.Location{Kind: memory.SQLite, Target: "./data/my.db"}) {
		t.Errorf("memory.Parse(store.url) = %+v, %v; want the bare path", loc, err)
	}
}

func TestLoadEnvOverrides(t *testing.T) {
	dir := inEmptyDir(t)
	file := writeFile(t, dir, "custom.yaml", `
llm:
  base_url: http://from-file/v1
  max_iterations: 3
tools:
  servers:
    - {name: k8s, command: kubectl-mcp}
`)
	c, err := Load(file, env(
		"OPSGATE_LLM_BASE_URL", "http://from-env:8000/v1",
		"OPSGATE_LLM_MAX_ITERATIONS", "9",
		"OPSGATE_LLM_API_KEY", "", // empty counts as unset
		"OPSGATE_TELEGRAM_TOKEN", "tg-token",
		"OPSGATE_TELEGRAM_ALLOWED_USERS", "1, 2,3",
		"OPSGATE_SESSION_QUEUE_MODE", "interrupt",
		"OPSGATE_MEMORY_ENABLED", "false",
		"OPSGATE_APPROVALS_EXPIRY", "5m",
		"OPSGATE_LLM_TIMEOUT", "2m",
		"OPSGATE_LLM_STREAM_IDLE_TIMEOUT", "30s",
		"OPSGATE_SLACK_API_URL", "http://slack-fake/api",
		"OPSGATE_TOOLS_SERVERS", `[{"name":"argo","url":"http://argo:9000/mcp"},{name: k8s, command: kubectl-mcp}]`,
		"OPSGATE_TOOLS_DEFAULT_TOOLSETS", "argo",
		"OPSGATE_TOOLS_CALL_TIMEOUT", "45s",
		"OPSGATE_SCHEDULES", `[{name: nightly, cron: "@daily", prompt: check, target: "telegram:42"}]`,
	))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{
		"base_url": c.LLM.BaseURL, "max_iterations": c.LLM.MaxIterations, "api_key": c.LLM.APIKey,
		"tg_token": c.Telegram.Token, "tg_users": c.Telegram.AllowedUsers, "queue": c.Session.QueueMode,
		"memory": c.Memory.Enabled, "expiry": c.Approvals.Expiry, "slack_api": c.Slack.APIURL,
		"servers": len(c.Tools.Servers), "default_toolsets": c.Tools.DefaultToolsets, "schedule": c.Schedules[0].Name,
		"timeout": c.LLM.Timeout, "stream_idle_timeout": c.LLM.StreamIdleTimeout,
		"call_timeout": c.Tools.CallTimeout,
	}
	want := map[string]any{
		"base_url": "http://from-env:8000/v1", "max_iterations": 9, "api_key": "",
		"tg_token": "tg-token", "tg_users": []int64{1, 2, 3}, "queue": "interrupt",
		"memory": false, "expiry": 5 * time.Minute, "slack_api": "http://slack-fake/api/",
		"servers": 2, "default_toolsets": []string{"argo"}, "schedule": "nightly",
		"timeout": 2 * time.Minute, "stream_idle_timeout": 30 * time.Second,
		"call_timeout": 45 * time.Second,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("overrides (-want +got):\n%s", diff)
	}
	if src := c.Source("llm.max_iterations"); src != "OPSGATE_LLM_MAX_ITERATIONS" {
		t.Errorf("Source(llm.max_iterations) = %q", src)
	}
}

func TestLoadFileSelection(t *testing.T) {
	dir := inEmptyDir(t)
	writeFile(t, dir, "opsgate.yaml", "llm: {model: from-default-file}\n")
	other := writeFile(t, dir, "other.yaml", "llm: {model: from-other-file}\n")
	flagFile := writeFile(t, dir, "flag.yaml", "llm: {model: from-flag}\n")
	tests := []struct {
		name, flag string
		env        func(string) string
		model      string
		err        string
	}{
		{name: "./opsgate.yaml", env: env(), model: "from-default-file"},
		{name: "OPSGATE_CONFIG", env: env("OPSGATE_CONFIG", other), model: "from-other-file"},
		{name: "flag wins", flag: flagFile, env: env("OPSGATE_CONFIG", other), model: "from-flag"},
		{name: "missing flag file", flag: filepath.Join(dir, "nope.yaml"), env: env(),
			err: "config: file " + filepath.Join(dir, "nope.yaml") + " (named by --config) does not exist"},
		{name: "missing OPSGATE_CONFIG file", env: env("OPSGATE_CONFIG", "gone.yaml"),
			err: "config: file gone.yaml (named by OPSGATE_CONFIG) does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(tt.flag, tt.env)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.LLM.Model != tt.model {
				t.Errorf("model = %q, want %q", c.LLM.Model, tt.model)
			}
		})
	}
}

func TestLoadDefaultToolsets(t *testing.T) {
	dir := inEmptyDir(t)
	servers := "  servers:\n    - {name: a, url: http://a/mcp}\n    - {name: b, command: b-mcp}\n"
	tests := []struct {
		name, body string
		want       []string
	}{
		{"unset means every server", "tools:\n" + servers, []string{"a", "b"}},
		{"explicit empty means none", "tools:\n  default_toolsets: []\n" + servers, []string{}},
		{"explicit list", "tools:\n  default_toolsets: [b, memory]\n" + servers, []string{"b", "memory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(writeFile(t, dir, "c.yaml", tt.body), env())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, c.Tools.DefaultToolsets); diff != "" {
				t.Errorf("default_toolsets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, body string
		env        []string
		want       string // the whole message, or a prefix ending in "…"
	}{
		{"max_iterations zero", "llm: {max_iterations: 0}", nil,
			"config: llm.max_iterations: must be at least 1 (got 0) (c.yaml line 1)"},
		{"max_iterations from env", "", []string{"OPSGATE_LLM_MAX_ITERATIONS", "0"},
			"config: llm.max_iterations: must be at least 1 (got 0) (set by OPSGATE_LLM_MAX_ITERATIONS)"},
		{"max_iterations not a number", "llm:\n  max_iterations: lots", nil,
			`config: llm.max_iterations: must be a whole number (got "lots") (c.yaml line 2)`},
		{"env not a number", "", []string{"OPSGATE_MEMORY_TOKEN_BUDGET", "big"},
			`config: memory.token_budget: must be a whole number (got "big") (OPSGATE_MEMORY_TOKEN_BUDGET)`},
		{"context window", "llm: {context_window_messages: 1}", nil,
			"config: llm.context_window_messages: must be at least 2 (got 1) (c.yaml line 1)"},
		{"reasoning effort", "llm: {reasoning_effort: extreme}", nil,
			`config: llm.reasoning_effort: "extreme" is not one of none, minimal, low, medium, high, xhigh (or empty for the model's default) (c.yaml line 1)`},
		{"negative max_tokens", "llm: {max_tokens: -1}", nil,
			"config: llm.max_tokens: must be 0 (no limit) or more (got -1) (c.yaml line 1)"},
		{"zero timeout", "llm: {timeout: 0s}", nil,
			"config: llm.timeout: must be a positive duration such as 60s (got 0s) (c.yaml line 1)"},
		{"timeout not a duration", "llm:\n  timeout: 60", nil,
			`config: llm.timeout: "60" is not a duration (use a number with a unit, e.g. 30m or 1h) (c.yaml line 2)`},
		{"negative stream idle timeout from env", "", []string{"OPSGATE_LLM_STREAM_IDLE_TIMEOUT", "-5s"},
			"config: llm.stream_idle_timeout: must be a positive duration such as 60s (got -5s) (set by OPSGATE_LLM_STREAM_IDLE_TIMEOUT)"},
		{"base_url", "llm: {base_url: localhost:11434}", nil,
			`config: llm.base_url: "localhost:11434" is not an http:// or https:// URL (c.yaml line 1)`},
		{"OPENAI_BASE_URL fallback", "", []string{"OPENAI_BASE_URL", "localhost:4000"},
			`config: llm.base_url: "localhost:4000" is not an http:// or https:// URL (set by OPENAI_BASE_URL)`},
		{"unknown key with typo", "llm:\n  bse_url: http://x/v1", nil,
			"config: llm.bse_url: unknown key (did you mean llm.base_url?) (c.yaml line 2)"},
		{"unknown key in camel case", "llm:\n  maxIterations: 3", nil,
			"config: llm.maxIterations: unknown key (did you mean llm.max_iterations?) (c.yaml line 2)"},
		{"key in the wrong section", "model: gpt-4o", nil,
			"config: model: unknown key (did you mean llm.model?) (c.yaml line 1)"},
		{"unknown key without suggestion", "llm:\n  flux_capacitor: on", nil,
			"config: llm.flux_capacitor: unknown key (c.yaml line 2)"},
		{"unknown server key", "tools:\n  servers:\n    - {name: a, url: http://a/mcp, header: {}}", nil,
			"config: tools.servers[0].header: unknown key (did you mean tools.servers[0].headers?) (c.yaml line 3)"},
		{"section is not a mapping", "llm: openai", nil,
			`config: llm: must be a mapping of keys (got "openai") (c.yaml line 1)`},
		{"list expected", "tools: {default_toolsets: k8s}", nil,
			`config: tools.default_toolsets: must be a list (got "k8s") (c.yaml line 1)`},
		{"unterminated expansion", "llm: {api_key: '${KEY'}", nil,
			`config: llm.api_key: unterminated ${ in "${KEY" (write $$ for a literal $) (c.yaml line 1)`},
		{"queue mode", "session: {queue_mode: foo}", nil,
			`config: session.queue_mode: "foo" is not one of steer, followup, interrupt (c.yaml line 1)`},
		{"queue mode from env", "", []string{"OPSGATE_SESSION_QUEUE_MODE", "later"},
			`config: session.queue_mode: "later" is not one of steer, followup, interrupt (set by OPSGATE_SESSION_QUEUE_MODE)`},
		{"store mysql", "store: {url: 'mysql://root@db/opsgate'}", nil,
			`config: store.url: unsupported scheme "mysql" (use sqlite://PATH or postgres://…) (c.yaml line 1)`},
		{"store postgres without host", "store: {url: 'postgres:///opsgate'}", nil,
			"config: store.url: postgres URL needs a host, e.g. postgres://opsgate@db:5432/opsgate (c.yaml line 1)"},
		{"store empty", "store: {url: ''}", nil,
			"config: store.url: must not be empty (use sqlite://PATH or postgres://…) (c.yaml line 1)"},
		{"memory budget", "memory: {token_budget: 0}", nil,
			"config: memory.token_budget: must be at least 1 (got 0) (c.yaml line 1)"},
		{"memory min_score above 1", "memory: {min_score: 1.5}", nil,
			"config: memory.min_score: must be between 0 and 1 (got 1.5) (c.yaml line 1)"},
		{"memory min_score not a number from env", "", []string{"OPSGATE_MEMORY_MIN_SCORE", "high"},
			`config: memory.min_score: must be a number (got "high") (OPSGATE_MEMORY_MIN_SCORE)`},
		{"memory max_doc_bytes", "memory: {max_doc_bytes: 0}", nil,
			"config: memory.max_doc_bytes: must be at least 1 (got 0) (c.yaml line 1)"},
		{"server with command and url", "tools:\n  servers:\n    - {name: a, url: http://a/mcp}\n    - {name: b, command: b, url: http://b/mcp}", nil,
			"config: tools.servers[1]: set exactly one of command (stdio server) or url (streamable HTTP server) (c.yaml line 4)"},
		{"server with neither", "tools:\n  servers:\n    - {name: a}", nil,
			"config: tools.servers[0]: set exactly one of command (stdio server) or url (streamable HTTP server) (c.yaml line 3)"},
		{"server without name", "tools:\n  servers:\n    - {url: http://a/mcp}", nil,
			"config: tools.servers[0].name: must be set (it is also the toolset name) (c.yaml line 3)"},
		{"duplicate server names", "tools:\n  servers:\n    - {name: k8s, url: http://a/mcp}\n    - {name: k8s, command: k}", nil,
			`config: tools.servers[1].name: "k8s" is already the name of tools.servers[0]; names must be unique (c.yaml line 4)`},
		{"reserved server name", "tools:\n  servers:\n    - {name: memory, command: m}", nil,
			`config: tools.servers[0].name: "memory" is reserved for opsgate's own tools; pick another name (c.yaml line 3)`},
		{"bad server name", "tools:\n  servers:\n    - {name: 'k 8s', command: m}", nil,
			`config: tools.servers[0].name: "k 8s": use 1 to 32 letters, digits, - and _ (c.yaml line 3)`},
		{"server url", "tools:\n  servers:\n    - {name: a, url: 'ftp://a'}", nil,
			`config: tools.servers[0].url: "ftp://a" is not an http:// or https:// URL (c.yaml line 3)`},
		{"headers on command server", "tools:\n  servers:\n    - {name: a, command: a, headers: {X: y}}", nil,
			"config: tools.servers[0].headers: headers are for url servers; a command server takes args and env (c.yaml line 3)"},
		{"args on url server", "tools:\n  servers:\n    - {name: a, url: http://a/mcp, args: [x]}", nil,
			"config: tools.servers[0]: args and env are for command servers; an url server takes headers (c.yaml line 3)"},
		{"unknown default toolset", "tools:\n  default_toolsets: [k8s, helm]\n  servers:\n    - {name: k8s, command: k}", nil,
			`config: tools.default_toolsets[1]: "helm" is not the name of a server in tools.servers (c.yaml line 2)`},
		{"bad duration", "approvals: {expiry: 30 minutes}", nil,
			`config: approvals.expiry: "30 minutes" is not a duration (use a number with a unit, e.g. 30m or 1h) (c.yaml line 1)`},
		{"call_timeout zero", "tools: {call_timeout: 0s}", nil,
			"config: tools.call_timeout: must be a positive duration such as 2m (got 0s) (c.yaml line 1)"},
		{"call_timeout negative from env", "", []string{"OPSGATE_TOOLS_CALL_TIMEOUT", "-5s"},
			"config: tools.call_timeout: must be a positive duration such as 2m (got -5s) (set by OPSGATE_TOOLS_CALL_TIMEOUT)"},
		{"call_timeout not a duration", "tools:\n  call_timeout: 120", nil,
			`config: tools.call_timeout: "120" is not a duration (use a number with a unit, e.g. 30m or 1h) (c.yaml line 2)`},
		{"server call_timeout negative", "tools:\n  servers:\n    - {name: a, url: http://a/mcp, call_timeout: -1m}", nil,
			"config: tools.servers[0].call_timeout: must be a positive duration such as 10m, or 0 (or absent) for tools.call_timeout (got -1m0s) (c.yaml line 3)"},
		{"server call_timeout not a duration", "tools:\n  servers:\n    - {name: a, url: http://a/mcp, call_timeout: soon}", nil,
			`config: tools.servers[0].call_timeout: "soon" is not a duration (use a number with a unit, e.g. 30m or 1h) (c.yaml line 3)`},
		{"zero duration", "approvals: {expiry: 0s}", nil,
			"config: approvals.expiry: must be a positive duration such as 30m (got 0s) (c.yaml line 1)"},
		{"listen", "server: {listen: 8080}", nil,
			`config: server.listen: "8080" is not HOST:PORT (e.g. 127.0.0.1:8080, or :8080 for every interface) (c.yaml line 1)`},
		{"listen port", "server: {listen: 'localhost:http-alt'}", nil,
			`config: server.listen: port "http-alt" is not a number from 0 to 65535 (c.yaml line 1)`},
		{"telegram user ids are numbers", "telegram: {allowed_users: ['@alice']}", nil,
			`config: telegram.allowed_users[0]: must be a whole number (got "@alice") (c.yaml line 1)`},
		{"telegram api_url", "telegram: {api_url: 'api.telegram.org'}", nil,
			`config: telegram.api_url: "api.telegram.org" is not an http:// or https:// URL (c.yaml line 1)`},
		{"slack app token alone", "slack: {app_token: xapp-1}", nil,
			"config: slack.bot_token: must be set when slack.app_token is (c.yaml line 1)"},
		{"schedule cron", "schedules:\n  - {name: x, cron: 'every day', prompt: p, target: 'slack:C1'}", nil,
			`config: schedules[0].cron: "every day" is not a cron spec (5 fields such as "0 9 * * 1-5", or @daily, @every 1h) (c.yaml line 2)`},
		{"schedule target", "schedules:\n  - {name: x, cron: '@daily', prompt: p, target: C1}", nil,
			`config: schedules[0].target: "C1" is not log or PLATFORM:ID with PLATFORM one of telegram, slack, discord (e.g. slack:C0123456) (c.yaml line 2)`},
		{"schedule duplicate", "schedules:\n  - {name: x, cron: '@daily', prompt: p, target: 'slack:C1'}\n  - {name: x, cron: '@hourly', prompt: p, target: 'slack:C1'}", nil,
			`config: schedules[1].name: "x" is already the name of schedules[0]; names must be unique (c.yaml line 3)`},
		{"key set twice", "llm:\n  model: a\n  model: b", nil,
			"config: llm.model: set twice (c.yaml line 3)"},
		{"env servers not yaml", "", []string{"OPSGATE_TOOLS_SERVERS", "[{"},
			"config: tools.servers: OPSGATE_TOOLS_SERVERS is not valid YAML or JSON: …"},
		{"yaml syntax", "llm:\n  model: [", nil,
			"config: c.yaml: yaml: line 2: …"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := inEmptyDir(t)
			writeFile(t, dir, "c.yaml", tt.body)
			_, err := Load("c.yaml", env(tt.env...))
			if err == nil {
				t.Fatalf("Load succeeded, want %q", tt.want)
			}
			if prefix, ok := strings.CutSuffix(tt.want, "…"); ok {
				if !strings.HasPrefix(err.Error(), prefix) {
					t.Fatalf("err = %q, want prefix %q", err, prefix)
				}
				return
			}
			if err.Error() != tt.want {
				t.Errorf("err  = %q\nwant = %q", err, tt.want)
			}
		})
	}
}

func TestAPIKeyOrigin(t *testing.T) {
	tests := []struct {
		name, body string
		env        []string
		origin     string
		withheld   bool
		defaulted  bool
	}{
		{name: "OPENAI_API_KEY for OpenAI", env: []string{"OPENAI_API_KEY", "sk-1"},
			origin: "set by OPENAI_API_KEY", defaulted: true},
		{name: "OPENAI_API_KEY with OPENAI_BASE_URL", env: []string{"OPENAI_API_KEY", "sk-1", "OPENAI_BASE_URL", "http://litellm:4000/v1"},
			origin: "set by OPENAI_API_KEY"},
		{name: "OPENAI_API_KEY withheld from another endpoint", env: []string{"OPENAI_API_KEY", "sk-1", "OPSGATE_LLM_BASE_URL", "https://vllm.internal/v1"},
			origin: "OPENAI_API_KEY is set but only sent to OpenAI or to OPENAI_BASE_URL", withheld: true},
		{name: "withheld from a configured Ollama", body: "llm: {base_url: 'http://127.0.0.1:11434/v1'}", env: []string{"OPENAI_API_KEY", "sk-1"},
			origin: "OPENAI_API_KEY is set but only sent to OpenAI or to OPENAI_BASE_URL", withheld: true},
		{name: "key in the file", body: "llm: {base_url: 'https://vllm.internal/v1', api_key: k-1}", env: []string{"OPENAI_API_KEY", "sk-1"},
			origin: "set in c.yaml"},
		{name: "key from OPSGATE_LLM_API_KEY", env: []string{"OPSGATE_LLM_API_KEY", "k-2", "OPSGATE_LLM_BASE_URL", "https://vllm.internal/v1"},
			origin: "set by OPSGATE_LLM_API_KEY"},
		{name: "no key for the default Ollama", defaulted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := inEmptyDir(t)
			writeFile(t, dir, "c.yaml", tt.body)
			c, err := Load("c.yaml", env(tt.env...))
			if err != nil {
				t.Fatal(err)
			}
			if c.APIKeyOrigin() != tt.origin || c.OpenAIKeyWithheld() != tt.withheld || c.BaseURLDefaulted() != tt.defaulted {
				t.Errorf("origin %q, withheld %v, defaulted %v; want %q, %v, %v",
					c.APIKeyOrigin(), c.OpenAIKeyWithheld(), c.BaseURLDefaulted(), tt.origin, tt.withheld, tt.defaulted)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	get := env("A", "1", "B_2", "two")
	tests := []struct{ in, want string }{
		{"${A}", "1"},
		{"x${A}y${B_2}z", "x1ytwoz"},
		{"${UNDEFINED}", ""},
		{"$$", "$"},
		{"$${A}", "${A}"},
		{"pa$word", "pa$word"},
		{"trailing $", "trailing $"},
	}
	for _, tt := range tests {
		got, err := expand(tt.in, get)
		if err != nil || got != tt.want {
			t.Errorf("expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestExampleConfigsLoad keeps the shipped examples in step with the loader.
// Policy files (policy*.yaml) are not configurations: package policy loads
// its example.
func TestExampleConfigsLoad(t *testing.T) {
	files, err := filepath.Glob("../../configs/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no example configs found in configs/")
	}
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "policy") {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			if _, err := Load(f, env("OPENAI_API_KEY", "sk-test")); err != nil {
				t.Fatalf("example config does not load: %v", err)
			}
		})
	}
}

// TestChatSectionEnableRules: a chat section is off when absent or when it
// says enabled: false; any other section without a usable token is an error
// naming the key (and the ${VAR} when that is why it is empty).
func TestChatSectionEnableRules(t *testing.T) {
	tests := []struct {
		name, body string
		env        []string
		want       []string // Adapters() when Load succeeds
		err        string
	}{
		{name: "absent sections are off", body: "llm: {model: m}\n"},
		{name: "tokens set", body: "telegram: {token: t}\nslack: {bot_token: xoxb-1, app_token: xapp-1}\ndiscord: {token: d}\n",
			want: []string{"telegram", "slack", "discord"}},
		{name: "telegram token variable unset", body: "telegram:\n  token: ${TELEGRAM_TOKEN}\n  allowed_users: [1]\n",
			err: "config: telegram.token is empty: ${TELEGRAM_TOKEN} is not set (c.yaml line 2)"},
		{name: "slack bot token variable unset", body: "slack:\n  bot_token: ${SLACK_BOT_TOKEN}\n",
			err: "config: slack.bot_token is empty: ${SLACK_BOT_TOKEN} is not set (c.yaml line 2)"},
		{name: "discord token variable empty", body: "discord:\n  token: ${DISCORD_BOT_TOKEN}\n", env: []string{"DISCORD_BOT_TOKEN", ""},
			err: "config: discord.token is empty: ${DISCORD_BOT_TOKEN} is not set (c.yaml line 2)"},
		{name: "two variables", body: "telegram: {token: '${TG_ID}${TG_SECRET}'}\n",
			err: "config: telegram.token is empty: ${TG_ID} and ${TG_SECRET} are not set (c.yaml line 1)"},
		{name: "slack app token variable unset", body: "slack:\n  bot_token: xoxb-1\n  app_token: ${SLACK_APP_TOKEN}\n",
			err: "config: slack.app_token is empty: ${SLACK_APP_TOKEN} is not set (c.yaml line 3)"},
		{name: "slack signing secret variable unset", body: "slack:\n  bot_token: xoxb-1\n  signing_secret: ${SLACK_SIGNING_SECRET}\n",
			err: "config: slack.signing_secret is empty: ${SLACK_SIGNING_SECRET} is not set (c.yaml line 3)"},
		{name: "telegram webhook secret variable unset", body: "telegram:\n  token: t\n  webhook_secret: ${TG_WEBHOOK_SECRET}\n",
			err: "config: telegram.webhook_secret is empty: ${TG_WEBHOOK_SECRET} is not set (c.yaml line 3)"},
		{name: "variable set", body: "slack:\n  bot_token: ${SLACK_BOT_TOKEN}\n  app_token: ${SLACK_APP_TOKEN}\n",
			env: []string{"SLACK_BOT_TOKEN", "xoxb-1", "SLACK_APP_TOKEN", "xapp-1"}, want: []string{"slack"}},
		{name: "env override fills a token whose variable is unset", body: "slack:\n  bot_token: ${SLACK_BOT_TOKEN}\n",
			env: []string{"OPSGATE_SLACK_BOT_TOKEN", "xoxb-1"}, want: []string{"slack"}},
		{name: "an empty override counts as unset", body: "telegram: {token: t}\n",
			env: []string{"OPSGATE_TELEGRAM_TOKEN", ""}, want: []string{"telegram"}},
		{name: "enabled false with the variable unset", body: "slack:\n  enabled: false\n  bot_token: ${SLACK_BOT_TOKEN}\n  app_token: ${SLACK_APP_TOKEN}\n"},
		{name: "enabled false with a token", body: "telegram: {enabled: false, token: t}\ndiscord: {token: d}\n", want: []string{"discord"}},
		{name: "enabled false by env", body: "telegram: {token: t}\n", env: []string{"OPSGATE_TELEGRAM_ENABLED", "false"}},
		{name: "enabled true", body: "discord: {enabled: true, token: d}\n", want: []string{"discord"}},
		{name: "enabled true without a token", body: "slack: {enabled: true}\n",
			err: "config: slack.bot_token is empty: slack.enabled is true; set the token"},
		{name: "enabled true by env without a token", body: "", env: []string{"OPSGATE_DISCORD_ENABLED", "yes"},
			err: "config: discord.token is empty: discord.enabled is true; set the token"},
		{name: "enabled is a switch", body: "telegram: {enabled: maybe}\n",
			err: `config: telegram.enabled: must be true or false (got "maybe") (c.yaml line 1)`},
		{name: "literal empty token with settings", body: "telegram:\n  token: \"\"\n  allowed_users: [1]\n  approvers: [2]\n",
			err: "config: telegram.token is empty but the telegram section sets allowed_users, approvers: set the token, or telegram.enabled: false to keep telegram off"},
		{name: "settings without a token key", body: "discord:\n  guilds: [\"1\"]\n",
			err: "config: discord.token is empty but the discord section sets guilds: set the token, or discord.enabled: false to keep discord off"},
		{name: "literal empty token alone is off", body: "telegram:\n  token: \"\"\n"},
		{name: "settings of a disabled section", body: "discord:\n  enabled: false\n  guilds: [\"1\"]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := inEmptyDir(t)
			writeFile(t, dir, "c.yaml", tt.body)
			c, err := Load("c.yaml", env(tt.env...))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err  = %v\nwant = %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, c.Adapters()); diff != "" {
				t.Errorf("Adapters() (-want +got):\n%s", diff)
			}
			on := map[string]bool{"telegram": c.Telegram.On(), "slack": c.Slack.On(), "discord": c.Discord.On()}
			for name, isOn := range on {
				if isOn != slices.Contains(tt.want, name) {
					t.Errorf("%s On() = %v, disagrees with Adapters() %q", name, isOn, tt.want)
				}
			}
		})
	}
}

// Issue 20 (8d): a ${VAR} that is not set makes any key it empties an
// error naming the variable, FILE and line, as it did for platform tokens
// only: llm.base_url and llm.api_key became empty without a word (and
// doctor then blamed Ollama). An OPSGATE_ override of the key fills it; a
// number, switch or duration keeps its default, as the README says.
func TestUnsetVariableEmptyingAKeyIsAnError(t *testing.T) {
	tests := []struct {
		name, body string
		env        []string
		err        string // "" when Load succeeds
	}{
		{name: "llm.base_url", body: "llm:\n  base_url: ${LLM_URL}\n",
			err: "config: llm.base_url is empty: ${LLM_URL} is not set (c.yaml line 2)"},
		{name: "llm.api_key", body: "llm:\n  base_url: https://api.openai.com/v1\n  api_key: ${OPENAI_API_KEY}\n",
			err: "config: llm.api_key is empty: ${OPENAI_API_KEY} is not set (c.yaml line 3)"},
		{name: "store.url", body: "store: {url: '${DB_URL}'}\n",
			err: "config: store.url is empty: ${DB_URL} is not set (c.yaml line 1)"},
		{name: "a server's url", body: "tools:\n  servers:\n    - name: k8s\n      url: ${K8S_MCP}\n",
			err: "config: tools.servers[0].url is empty: ${K8S_MCP} is not set (c.yaml line 4)"},
		{name: "a server's env value", body: "tools:\n  servers:\n    - {name: gh, command: gh-mcp, env: {GITHUB_TOKEN: '${GH}'}}\n",
			err: "config: tools.servers[0].env.GITHUB_TOKEN is empty: ${GH} is not set (c.yaml line 3)"},
		{name: "a platform token, now with its line", body: "telegram:\n  token: ${TELEGRAM_TOKEN}\n",
			err: "config: telegram.token is empty: ${TELEGRAM_TOKEN} is not set (c.yaml line 2)"},
		{name: "overridden by OPSGATE_LLM_API_KEY", body: "llm:\n  base_url: https://api.openai.com/v1\n  api_key: ${OPENAI_API_KEY}\n",
			env: []string{"OPSGATE_LLM_API_KEY", "k-1"}},
		{name: "set", body: "llm:\n  base_url: ${LLM_URL}\n", env: []string{"LLM_URL", "http://llm:8000/v1"}},
		{name: "partly set", body: "llm:\n  base_url: http://llm${PORT}/v1\n"},
		{name: "a number keeps its default", body: "llm:\n  max_iterations: ${ITER}\n"},
		{name: "a disabled platform", body: "slack:\n  enabled: false\n  bot_token: ${SLACK_BOT_TOKEN}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := inEmptyDir(t)
			writeFile(t, dir, "c.yaml", tt.body)
			_, err := Load("c.yaml", env(tt.env...))
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("Load: %v", err)
			case tt.err != "" && (err == nil || err.Error() != tt.err):
				t.Fatalf("err  = %v\nwant = %s", err, tt.err)
			}
		})
	}
}

// Issue 20 (8f): errors of the validation after decoding name FILE and
// line like the decoder's do: session.*, tools.servers[i], server.listen
// and store.url had none. A value set by a variable names the variable.
func TestValidationErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name, body string
		env        []string
		want       string
	}{
		{"session.queue_mode", "llm: {model: m}\nsession:\n  queue_mode: later\n", nil,
			`config: session.queue_mode: "later" is not one of steer, followup, interrupt (c.yaml line 3)`},
		{"a server without command or url", "tools:\n  servers:\n    - {name: a, url: http://a/mcp}\n    - {name: b}\n", nil,
			"config: tools.servers[1]: set exactly one of command (stdio server) or url (streamable HTTP server) (c.yaml line 4)"},
		{"a server without a name", "tools:\n  servers:\n    - url: http://a/mcp\n", nil,
			"config: tools.servers[0].name: must be set (it is also the toolset name) (c.yaml line 3)"},
		{"server.listen", "server:\n  listen: 8080\n", nil,
			`config: server.listen: "8080" is not HOST:PORT (e.g. 127.0.0.1:8080, or :8080 for every interface) (c.yaml line 2)`},
		{"store.url", "\nstore:\n  url: 'mysql://root@db/opsgate'\n", nil,
			`config: store.url: unsupported scheme "mysql" (use sqlite://PATH or postgres://…) (c.yaml line 3)`},
		{"llm.max_iterations", "llm: {max_iterations: 0}", nil,
			"config: llm.max_iterations: must be at least 1 (got 0) (c.yaml line 1)"},
		{"a server set by a variable", "", []string{"OPSGATE_TOOLS_SERVERS", "[{name: a}]"},
			"config: tools.servers[0]: set exactly one of command (stdio server) or url (streamable HTTP server) (set by OPSGATE_TOOLS_SERVERS)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := inEmptyDir(t)
			writeFile(t, dir, "c.yaml", tt.body)
			_, err := Load("c.yaml", env(tt.env...))
			if err == nil || err.Error() != tt.want {
				t.Errorf("err  = %v\nwant = %s", err, tt.want)
			}
		})
	}
}

// An empty key is an unknown key: it used to match the fields that have
// no key (File), so `"": x` set the file name (found by FuzzConfigFile).
func TestEmptyKeyIsUnknown(t *testing.T) {
	dir := inEmptyDir(t)
	for _, body := range []string{"\"\": /etc/other.yaml\n", "&0: 0\n", "llm:\n  \"\": 1\n"} {
		p := writeFile(t, dir, "opsgate.yaml", body)
		c, err := Load(p, env())
		if err == nil || !strings.Contains(err.Error(), "unknown key") {
			t.Errorf("%q: Load = %+v, %v; want an unknown key error", body, c, err)
		}
	}
}
