package config

import (
	"fmt"
	"slices"
	"strings"
)

// on is the one rule for whether a chat adapter runs: its token is set and
// it is not turned off. Validate has already refused enabled: true without
// a token and every token that is empty by mistake.
func on(token string, enabled *bool) bool {
	return token != "" && (enabled == nil || *enabled)
}

// On reports whether serve runs the Telegram adapter.
func (t Telegram) On() bool { return on(t.Token, t.Enabled) }

// On reports whether serve runs the Slack adapter.
func (s Slack) On() bool { return on(s.BotToken, s.Enabled) }

// On reports whether serve runs the Discord adapter.
func (d Discord) On() bool { return on(d.Token, d.Enabled) }

// Adapters returns the names of the chat adapters serve runs, in the order
// telegram, slack, discord.
func (c *Config) Adapters() []string {
	var names []string
	for _, p := range c.platforms() {
		if on(p.token.value, p.enabled) {
			names = append(names, p.name)
		}
	}
	return names
}

// keyValue is one key of a chat section (without the section) and its value.
type keyValue struct{ key, value string }

// platform is what the enable rule needs to know of one chat section.
type platform struct {
	name    string
	enabled *bool
	token   keyValue
	// needToken are keys that mean nothing without the token.
	needToken []keyValue
}

func (c *Config) platforms() []platform {
	t, s, d := c.Telegram, c.Slack, c.Discord
	return []platform{
		{
			name: "telegram", enabled: t.Enabled, token: keyValue{"token", t.Token},
		},
		{
			name: "slack", enabled: s.Enabled, token: keyValue{"bot_token", s.BotToken},
			needToken: []keyValue{{"app_token", s.AppToken}, {"signing_secret", s.SigningSecret}},
		},
		{
			name: "discord", enabled: d.Enabled, token: keyValue{"token", d.Token},
			needToken: []keyValue{{"application_id", d.ApplicationID}},
		},
	}
}

// validatePlatform refuses a chat section that would leave its adapter off
// without saying so: enabled: true without a token, or settings written
// without a token (a token whose ${VAR} is not set is checkUnset's). A
// section that is absent, or says enabled: false, is off and not checked
// further.
func (c *Config) validatePlatform(p platform) error {
	if p.enabled != nil && !*p.enabled {
		return nil
	}
	tokenPath := p.name + "." + p.token.key
	if p.token.value != "" {
		return nil
	}
	// A token that an unset ${VAR} emptied was refused by checkUnset.
	if p.enabled != nil {
		return fmt.Errorf("config: %s is empty: %s.enabled is true; set the token", tokenPath, p.name)
	}
	var needing []string
	for _, kv := range p.needToken {
		if kv.value != "" {
			needing = append(needing, p.name+"."+kv.key)
		}
	}
	if len(needing) > 0 {
		return c.errorf(tokenPath, "must be set when %s is", strings.Join(needing, " or "))
	}
	if written := c.fileKeysOf(p.name, p.token.key, "enabled"); len(written) > 0 {
		return fmt.Errorf("config: %s is empty but the %s section sets %s: set the token, or %s.enabled: false to keep %s off",
			tokenPath, p.name, strings.Join(written, ", "), p.name, p.name)
	}
	return nil
}

// fileKeysOf lists the keys of section written in the file, but for those
// named in except.
func (c *Config) fileKeysOf(section string, except ...string) []string {
	var keys []string
	for path := range c.fileKeys {
		key, ok := strings.CutPrefix(path, section+".")
		if !ok || strings.ContainsAny(key, ".[") || slices.Contains(except, key) {
			continue
		}
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}
