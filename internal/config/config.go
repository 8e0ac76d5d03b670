// Package config reads opsgate's configuration (docs/design.md §7): a YAML file with
// ${VAR} expansion, OPSGATE_<SECTION>_<KEY> environment overrides, the
// OPENAI_API_KEY / OPENAI_BASE_URL fallbacks and defaults that make a run
// without any file work. Load validates everything and returns one precise
// error naming the key, so that nothing starts half-configured.
package config

import "time"

// Well-known endpoints and the default models that go with them.
const (
	OpenAIBaseURL = "https://api.openai.com/v1"
	OllamaBaseURL = "http://127.0.0.1:11434/v1"
	// OpenAIModel is the default model for any endpoint but a local Ollama.
	OpenAIModel = "gpt-4o-mini"
	// OllamaModel is the default model for Ollama: small, and good at tool calls.
	OllamaModel = "qwen2.5"
	// DefaultFile is read when no file is named and it exists.
	DefaultFile = "opsgate.yaml"
)

// Config is the whole configuration. Field tags are the YAML keys.
type Config struct {
	LLM       LLM        `yaml:"llm"`
	Store     Store      `yaml:"store"`
	Memory    Memory     `yaml:"memory"`
	Session   Session    `yaml:"session"`
	Tools     Tools      `yaml:"tools"`
	Approvals Approvals  `yaml:"approvals"`
	Server    HTTP       `yaml:"server"`
	Policy    Policy     `yaml:"policy"`
	Telegram  Telegram   `yaml:"telegram"`
	Slack     Slack      `yaml:"slack"`
	Discord   Discord    `yaml:"discord"`
	Schedules []Schedule `yaml:"schedules"`
	Incidents Incidents  `yaml:"incidents"`

	// File is the file the configuration was read from; empty when none was
	// found and only defaults and the environment apply.
	File string `yaml:"-"`
	// sources maps a key path to the environment variable that set it, so
	// that an error about the key can say where the value came from.
	sources map[string]string
	// fileKeys maps the key paths written in the file (list items as
	// path[i]) to their line, so that an error can say where a value was
	// written and a chat section with settings but no token is told from an
	// absent one.
	fileKeys map[string]int
	// unset maps a key path to the ${VAR}s in its value that expanded to
	// nothing, so that a value they emptied can name the variable to set.
	unset map[string]unsetVars
	// openAIKeyWithheld: OPENAI_API_KEY is set but not used (see fillDefaults).
	openAIKeyWithheld bool
	// baseURLDefaulted: nobody set llm.base_url; it is a built-in default.
	baseURLDefaulted bool
}

// LLM is the model endpoint (any OpenAI-compatible Chat Completions API).
type LLM struct {
	BaseURL               string `yaml:"base_url"`
	APIKey                string `yaml:"api_key"`
	Model                 string `yaml:"model"`
	MaxIterations         int    `yaml:"max_iterations"`
	ContextWindowMessages int    `yaml:"context_window_messages"`
	ReasoningEffort       string `yaml:"reasoning_effort"`
	MaxTokens             int    `yaml:"max_tokens"`
	// Timeout bounds the wait for the first chunk of an answer.
	Timeout time.Duration `yaml:"timeout"`
	// StreamIdleTimeout bounds the silence between two chunks of an answer.
	StreamIdleTimeout time.Duration `yaml:"stream_idle_timeout"`
	// ContextTokens is the model's context budget: past 70 % of it the
	// history is compacted.
	ContextTokens int `yaml:"context_tokens"`
}

// Store is where all durable state lives.
type Store struct {
	// URL is sqlite://PATH (or a bare PATH) or postgres://….
	URL string `yaml:"url"`
}

// DefaultMinScore is memory.min_score's default, chosen on memory's
// labelled queries (memory.DefaultMinScore; config links no memory code).
const DefaultMinScore = 0.25

// Memory is long-term memory retrieval.
type Memory struct {
	Enabled     bool `yaml:"enabled"`
	TokenBudget int  `yaml:"token_budget"`
	// MaxDocs bounds the documents injected per turn, trusted and
	// untrusted together.
	MaxDocs int `yaml:"max_docs"`
	// MaxDocBytes is the largest document memory import reads; a larger
	// file is skipped from its size alone.
	MaxDocBytes int `yaml:"max_doc_bytes"`
	// MinScore is the relevance floor of memory_prepare: the share of the
	// question a document must cover (0..1) to be injected.
	MinScore float64 `yaml:"min_score"`
}

// Session tunes conversations.
type Session struct {
	QueueMode string `yaml:"queue_mode"`
}

// Tools are the MCP servers; each server is a toolset of the same name.
type Tools struct {
	// DefaultToolsets are loaded (read-only tools) into new conversations.
	// Unset means every configured server; an explicit [] means none.
	DefaultToolsets []string `yaml:"default_toolsets"`
	// CallTimeout bounds each tool call; a call still running then is
	// cancelled and the model is told.
	CallTimeout time.Duration `yaml:"call_timeout"`
	Servers     []MCPServer   `yaml:"servers"`
}

// MCPServer is one MCP server: a stdio command or a streamable HTTP URL.
type MCPServer struct {
	Name    string            `yaml:"name"`
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	// CallTimeout overrides tools.call_timeout for this server; 0 (or
	// absent) means tools.call_timeout.
	CallTimeout time.Duration `yaml:"call_timeout"`
	// Annotations override the risk the server's own MCP annotations give
	// its tools (docs/design.md §3).
	Annotations Annotations `yaml:"annotations"`
	// Roots are the directories the server serves (absolute, or relative
	// to the working directory): a policy args glob also matches a path
	// inside one relative to it. The filesystem server's own are learnt
	// from its list_allowed_directories.
	Roots []string `yaml:"roots"`
	// Previews are recipes for the approval cards of this server's tools
	// when it has no built-in preview (docs/design.md §18).
	Previews []PreviewRecipe `yaml:"previews"`
}

// Approvals tunes the approval gate (which itself cannot be turned off).
type Approvals struct {
	Expiry time.Duration `yaml:"expiry"`
}

// HTTP is the built-in HTTP server (/healthz, /metrics, webhooks).
type HTTP struct {
	Listen string `yaml:"listen"`
}

// Policy names the policy file (rules, roles, approvers).
type Policy struct {
	File string `yaml:"file"`
}

// Telegram is the Telegram adapter, run when On (see adapters.go).
type Telegram struct {
	// Enabled false turns the adapter off even with a token; nil (not
	// written) means on when Token is set.
	Enabled       *bool   `yaml:"enabled"`
	Token         string  `yaml:"token"`
	APIURL        string  `yaml:"api_url"`
	WebhookURL    string  `yaml:"webhook_url"`
	WebhookSecret string  `yaml:"webhook_secret"`
	AllowedUsers  []int64 `yaml:"allowed_users"`
	Approvers     []int64 `yaml:"approvers"`
}

// Slack is the Slack adapter, run when On (see adapters.go).
type Slack struct {
	Enabled       *bool    `yaml:"enabled"`
	BotToken      string   `yaml:"bot_token"`
	AppToken      string   `yaml:"app_token"`
	SigningSecret string   `yaml:"signing_secret"`
	APIURL        string   `yaml:"api_url"`
	Channels      []string `yaml:"channels"`
	AllowedUsers  []string `yaml:"allowed_users"`
	Approvers     []string `yaml:"approvers"`
}

// Discord is the Discord adapter, run when On (see adapters.go).
type Discord struct {
	Enabled       *bool    `yaml:"enabled"`
	Token         string   `yaml:"token"`
	ApplicationID string   `yaml:"application_id"`
	APIURL        string   `yaml:"api_url"`
	Guilds        []string `yaml:"guilds"`
	Channels      []string `yaml:"channels"`
	AllowedUsers  []string `yaml:"allowed_users"`
	Approvers     []string `yaml:"approvers"`
}

// Schedule starts a run from a cron spec, like a message in Target.
type Schedule struct {
	Name   string `yaml:"name"`
	Cron   string `yaml:"cron"`
	Prompt string `yaml:"prompt"`
	// Target is slack:<channel>, telegram:<chat>, discord:<channel> or log.
	Target string `yaml:"target"`
	// Toolsets are loaded for the schedule's runs (default:
	// tools.default_toolsets).
	Toolsets []string `yaml:"toolsets"`
	// Approvers may approve the writes a scheduled run proposes (roles,
	// people or identities); never the schedule itself.
	Approvers []string `yaml:"approvers"`
	// CatchUp runs a fire missed while every replica was down, if it is
	// at most this old (0: never).
	CatchUp time.Duration `yaml:"catch_up"`
}

// Incidents turns Alertmanager's notifications into incident
// conversations (docs/design.md §19).
type Incidents struct {
	// Targets are tried in order; the first whose match fits an alert
	// group takes it. A group no target matches is acknowledged and logged.
	Targets []IncidentTarget `yaml:"targets"`
	// RetriggerAfter is how long an incident's group starts nothing new:
	// later notifications only update it; after it, a firing group that
	// had resolved opens a new incident and one still firing is triaged
	// again (default 1h).
	RetriggerAfter time.Duration `yaml:"retrigger_after"`
}

// On reports whether incidents are configured (there is a target).
func (i Incidents) On() bool { return len(i.Targets) > 0 }

// IncidentTarget is where the alert groups it matches become incidents.
type IncidentTarget struct {
	// Match maps label names to globs (* and ?); absent labels match
	// anything, an empty map every alert.
	Match map[string]string `yaml:"match"`
	// To is slack:<channel>, discord:<channel> or telegram:<chat>.
	To string `yaml:"to"`
	// Approvers may approve the writes proposed in the incident (roles,
	// people or identities); default: the platform's approvers.
	Approvers []string `yaml:"approvers"`
	// Toolsets are loaded for the incident (default:
	// tools.default_toolsets).
	Toolsets []string `yaml:"toolsets"`
	// Triage is the instruction the triage run starts with; the alerts'
	// labels and annotations follow it.
	Triage string `yaml:"triage"`
}

// DefaultTriage is a target's triage text when it sets none.
const DefaultTriage = "Triage this alert: check what it points at with read-only tools, say what you found and what you would do."

// DefaultRetriggerAfter is incidents.retrigger_after when unset.
const DefaultRetriggerAfter = time.Hour

// Defaults returns the configuration used for every key that neither the
// file nor the environment sets. llm.base_url, llm.model and
// tools.default_toolsets are filled in by Load because they depend on
// other keys.
func Defaults() Config {
	return Config{
		LLM:       LLM{MaxIterations: 25, ContextWindowMessages: 40, Timeout: 60 * time.Second, StreamIdleTimeout: 60 * time.Second, ContextTokens: 100000},
		Store:     Store{URL: "sqlite://./opsgate-data/opsgate.db"},
		Memory:    Memory{Enabled: true, TokenBudget: 2200, MaxDocs: 6, MaxDocBytes: 16 << 10, MinScore: DefaultMinScore},
		Session:   Session{QueueMode: "steer"},
		Tools:     Tools{CallTimeout: 120 * time.Second},
		Approvals: Approvals{Expiry: 30 * time.Minute},
		Server:    HTTP{Listen: "127.0.0.1:8080"},
		Telegram:  Telegram{APIURL: "https://api.telegram.org"},
		Slack:     Slack{APIURL: "https://slack.com/api/"},
		Discord:   Discord{APIURL: "https://discord.com/"},
		Incidents: Incidents{RetriggerAfter: DefaultRetriggerAfter},
	}
}
