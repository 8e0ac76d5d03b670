package config

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/opsgate/opsgate/core/tools/toolset"
	"github.com/opsgate/opsgate/internal/storeurl"
)

// ReservedToolsets are toolset names opsgate provides itself.
var ReservedToolsets = []string{"memory"}

// Validate checks every key and returns the first problem as one error
// naming the key and what to do about it.
func (c *Config) Validate() error {
	for _, check := range []func() error{
		c.validateLLM, c.validateStore, c.validateMemory, c.validateSession,
		c.validateTools, c.validateApprovals, c.validateServer, c.validateAdapters,
		c.validateSchedules, c.validateIncidents,
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// errorf is an error about the key at path; it says where the value was
// set (see where).
func (c *Config) errorf(path, format string, args ...any) error {
	return fmt.Errorf("config: %s: %s%s", path, fmt.Sprintf(format, args...), c.where(path))
}

// where says where the value at path (or the item or section holding it)
// was set: " (set by VARIABLE)", " (FILE line N)", or "" for a default.
func (c *Config) where(path string) string {
	if src := c.setBy(path); src != "" {
		return " (set by " + src + ")"
	}
	for p := path; p != "" && c.File != ""; p = parentPath(p) {
		if line := c.fileKeys[p]; line > 0 {
			return fmt.Sprintf(" (%s line %d)", c.File, line)
		}
	}
	return ""
}

// setBy is the environment variable that set the value at path (or the
// item or section holding it), or "".
func (c *Config) setBy(path string) string {
	for p := path; p != ""; p = parentPath(p) {
		if src := c.sources[p]; src != "" {
			return src
		}
	}
	return ""
}

// parentPath is the path of what holds the key at p: tools.servers[0] for
// tools.servers[0].name, tools.servers for tools.servers[0], "" for llm.
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// checkUnset refuses a string value that ${VAR}s left empty because they
// are not set: the variable is missing from opsgate's environment, which
// would otherwise turn a feature off, or point it nowhere, without a word.
// An OPSGATE_ variable that sets the key fills it; a chat section turned
// off (enabled: false) is not checked; a number, switch or duration keeps
// its default.
func (c *Config) checkUnset() error {
	paths := make([]string, 0, len(c.unset))
	for p, u := range c.unset {
		if u.emptied {
			paths = append(paths, p)
		}
	}
	slices.SortFunc(paths, func(a, b string) int {
		return cmp.Or(cmp.Compare(c.unset[a].line, c.unset[b].line), strings.Compare(a, b))
	})
	for _, p := range paths {
		if c.setBy(p) != "" || c.platformOff(p) {
			continue
		}
		u := c.unset[p]
		names := make([]string, len(u.names))
		for i, v := range u.names {
			names[i] = "${" + v + "}"
		}
		verb := "is"
		if len(names) > 1 {
			verb = "are"
		}
		return fmt.Errorf("config: %s is empty: %s %s not set%s", p, strings.Join(names, " and "), verb, c.where(p))
	}
	return nil
}

// platformOff reports whether the key at path is in a chat section turned
// off with enabled: false.
func (c *Config) platformOff(path string) bool {
	section, _, _ := strings.Cut(path, ".")
	for _, p := range c.platforms() {
		if p.name == section {
			return p.enabled != nil && !*p.enabled
		}
	}
	return false
}

func (c *Config) validateLLM() error {
	l := c.LLM
	if err := checkHTTPURL(l.BaseURL); err != nil {
		return c.errorf("llm.base_url", "%v", err)
	}
	if l.Model == "" {
		return c.errorf("llm.model", "must not be empty (e.g. %s)", OpenAIModel)
	}
	if l.MaxIterations < 1 {
		return c.errorf("llm.max_iterations", "must be at least 1 (got %d)", l.MaxIterations)
	}
	if l.ContextTokens < 1000 {
		return c.errorf("llm.context_tokens", "must be at least 1000 (got %d)", l.ContextTokens)
	}
	if l.ContextWindowMessages < 2 {
		return c.errorf("llm.context_window_messages", "must be at least 2 (got %d)", l.ContextWindowMessages)
	}
	if !slices.Contains([]string{"", "none", "minimal", "low", "medium", "high", "xhigh"}, l.ReasoningEffort) {
		return c.errorf("llm.reasoning_effort", "%q is not one of none, minimal, low, medium, high, xhigh (or empty for the model's default)", l.ReasoningEffort)
	}
	if l.MaxTokens < 0 {
		return c.errorf("llm.max_tokens", "must be 0 (no limit) or more (got %d)", l.MaxTokens)
	}
	// Zero would mean waiting forever on a model server that never answers.
	if l.Timeout <= 0 {
		return c.errorf("llm.timeout", "must be a positive duration such as 60s (got %s)", l.Timeout)
	}
	if l.StreamIdleTimeout <= 0 {
		return c.errorf("llm.stream_idle_timeout", "must be a positive duration such as 60s (got %s)", l.StreamIdleTimeout)
	}
	return nil
}

func (c *Config) validateStore() error {
	if _, err := storeurl.Parse(c.Store.URL); err != nil {
		return c.errorf("store.url", "%v", err)
	}
	return nil
}

func (c *Config) validateMemory() error {
	if c.Memory.TokenBudget < 1 {
		return c.errorf("memory.token_budget", "must be at least 1 (got %d)", c.Memory.TokenBudget)
	}
	if c.Memory.MaxDocs < 1 {
		return c.errorf("memory.max_docs", "must be at least 1 (got %d)", c.Memory.MaxDocs)
	}
	if c.Memory.MaxDocBytes < 1 {
		return c.errorf("memory.max_doc_bytes", "must be at least 1 (got %d)", c.Memory.MaxDocBytes)
	}
	if c.Memory.MinScore < 0 || c.Memory.MinScore > 1 {
		return c.errorf("memory.min_score", "must be between 0 and 1 (got %g)", c.Memory.MinScore)
	}
	return nil
}

func (c *Config) validateSession() error {
	if !slices.Contains([]string{"steer", "followup", "interrupt"}, c.Session.QueueMode) {
		return c.errorf("session.queue_mode", "%q is not one of steer, followup, interrupt", c.Session.QueueMode)
	}
	return nil
}

func (c *Config) validateTools() error {
	if c.Tools.CallTimeout <= 0 {
		return c.errorf("tools.call_timeout", "must be a positive duration such as 2m (got %s)", c.Tools.CallTimeout)
	}
	names := map[string]int{}
	for i, s := range c.Tools.Servers {
		p := fmt.Sprintf("tools.servers[%d]", i)
		switch {
		case s.Name == "":
			return c.errorf(p+".name", "must be set (it is also the toolset name)")
		case !toolset.ValidName(s.Name):
			return c.errorf(p+".name", "%q: use 1 to 32 letters, digits, - and _", s.Name)
		case slices.Contains(ReservedToolsets, s.Name):
			return c.errorf(p+".name", "%q is reserved for opsgate's own tools; pick another name", s.Name)
		}
		if j, dup := names[s.Name]; dup {
			return c.errorf(p+".name", "%q is already the name of tools.servers[%d]; names must be unique", s.Name, j)
		}
		names[s.Name] = i
		if (s.Command == "") == (s.URL == "") {
			return c.errorf(p, "set exactly one of command (stdio server) or url (streamable HTTP server)")
		}
		if s.URL != "" {
			if err := checkHTTPURL(s.URL); err != nil {
				return c.errorf(p+".url", "%v", err)
			}
			if len(s.Args) > 0 || len(s.Env) > 0 {
				return c.errorf(p, "args and env are for command servers; an url server takes headers")
			}
		}
		if s.Command != "" && len(s.Headers) > 0 {
			return c.errorf(p+".headers", "headers are for url servers; a command server takes args and env")
		}
		for k := range s.Env {
			if !validVarName(k) {
				return c.errorf(p+".env", "%q is not a valid environment variable name", k)
			}
		}
		if err := c.validatePreviews(p+".previews", s.Previews); err != nil {
			return err
		}
		if s.CallTimeout < 0 {
			return c.errorf(p+".call_timeout", "must be a positive duration such as 10m, or 0 (or absent) for tools.call_timeout (got %s)", s.CallTimeout)
		}
		if err := c.validateAnnotations(p+".annotations", s.Annotations); err != nil {
			return err
		}
	}
	for i, ts := range c.Tools.DefaultToolsets {
		if _, ok := names[ts]; !ok && !slices.Contains(ReservedToolsets, ts) {
			return c.errorf(fmt.Sprintf("tools.default_toolsets[%d]", i), "%q is not the name of a server in tools.servers", ts)
		}
	}
	return nil
}

func (c *Config) validateApprovals() error {
	if c.Approvals.Expiry <= 0 {
		return c.errorf("approvals.expiry", "must be a positive duration such as 30m (got %s)", c.Approvals.Expiry)
	}
	return nil
}

func (c *Config) validateServer() error {
	_, port, err := net.SplitHostPort(c.Server.Listen)
	if err != nil {
		return c.errorf("server.listen", "%q is not HOST:PORT (e.g. 127.0.0.1:8080, or :8080 for every interface)", c.Server.Listen)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return c.errorf("server.listen", "port %q is not a number from 0 to 65535", port)
	}
	return nil
}

func (c *Config) validateAdapters() error {
	for _, u := range []struct{ path, url string }{
		{"telegram.api_url", c.Telegram.APIURL}, {"slack.api_url", c.Slack.APIURL}, {"discord.api_url", c.Discord.APIURL},
	} {
		if err := checkHTTPURL(u.url); err != nil {
			return c.errorf(u.path, "%v", err)
		}
	}
	for _, p := range c.platforms() {
		if err := c.validatePlatform(p); err != nil {
			return err
		}
	}
	return nil
}

var cronDescriptors = []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}

func (c *Config) validateSchedules() error {
	seen := map[string]int{}
	for i, s := range c.Schedules {
		p := fmt.Sprintf("schedules[%d]", i)
		if s.Name == "" {
			return c.errorf(p+".name", "must be set")
		}
		if j, dup := seen[s.Name]; dup {
			return c.errorf(p+".name", "%q is already the name of schedules[%d]; names must be unique", s.Name, j)
		}
		seen[s.Name] = i
		if err := checkCron(s.Cron); err != nil {
			return c.errorf(p+".cron", "%v", err)
		}
		if strings.TrimSpace(s.Prompt) == "" {
			return c.errorf(p+".prompt", "must be set: it is the message the schedule sends")
		}
		platform, id, _ := strings.Cut(s.Target, ":")
		if s.Target != "log" && (!slices.Contains([]string{"telegram", "slack", "discord"}, platform) || id == "") {
			return c.errorf(p+".target", "%q is not log or PLATFORM:ID with PLATFORM one of telegram, slack, discord (e.g. slack:C0123456)", s.Target)
		}
		if s.CatchUp < 0 {
			return c.errorf(p+".catch_up", "must not be negative")
		}
	}
	return nil
}

// checkCron is a shape check (the schedule package parses for real): five
// or six fields, or a descriptor such as @daily or @every 1h, optionally
// after CRON_TZ=Zone.
func checkCron(spec string) error {
	s := strings.TrimSpace(spec)
	if strings.HasPrefix(s, "CRON_TZ=") || strings.HasPrefix(s, "TZ=") {
		_, s, _ = strings.Cut(s, " ")
	}
	f := strings.Fields(s)
	switch {
	case len(f) == 0:
		return fmt.Errorf("must be set, e.g. \"0 9 * * 1-5\"")
	case f[0] == "@every" && len(f) == 2:
		return nil
	case slices.Contains(cronDescriptors, f[0]) && len(f) == 1:
		return nil
	case len(f) == 5 || len(f) == 6:
		return nil
	}
	return fmt.Errorf("%q is not a cron spec (5 fields such as \"0 9 * * 1-5\", or @daily, @every 1h)", spec)
}

func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// URL", s)
	}
	return nil
}
