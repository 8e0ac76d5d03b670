package discord

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Config is the discord section of the configuration. Ids are Discord
// snowflakes, as strings; "*" in Guilds or Channels means "every".
type Config struct {
	// Token is the bot token (discord.token), with or without "Bot ".
	Token string
	// ApplicationID registers the slash command (discord.application_id);
	// when empty, the id from the gateway's READY is used.
	ApplicationID string
	// APIURL is the base for REST and gateway discovery
	// (discord.api_url, default https://discord.com/).
	APIURL string
	// Guilds and Channels are where the bot answers (discord.guilds,
	// discord.channels). A guild message is answered when its guild is in
	// Guilds (or Guilds is empty) and its channel, or a thread's parent, is
	// in Channels (or Channels is empty); with both empty no guild message
	// is answered.
	Guilds   []string
	Channels []string
	// AllowedUsers may talk to the bot in direct messages (discord.allowed_users).
	AllowedUsers []string
	// Approvers may decide approvals besides the requester (discord.approvers),
	// without a policy file; the command line gives them to the policy.
	Approvers []string
}

// DefaultAPIURL is Discord's API base.
const DefaultAPIURL = "https://discord.com/"

// validate checks c and returns it with defaults filled in.
func (c Config) validate() (Config, error) {
	c.Token = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(c.Token), "Bot "))
	if c.Token == "" {
		return c, errors.New("discord: discord.token is required")
	}
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	u, err := url.Parse(c.APIURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("discord: discord.api_url %q: want an http(s) URL such as %s", c.APIURL, DefaultAPIURL)
	}
	if !strings.HasSuffix(c.APIURL, "/") {
		c.APIURL += "/"
	}
	for _, l := range []struct {
		key  string
		ids  []string
		star bool
	}{
		{"discord.application_id", []string{c.ApplicationID}, false},
		{"discord.guilds", c.Guilds, true},
		{"discord.channels", c.Channels, true},
		{"discord.allowed_users", c.AllowedUsers, false},
		{"discord.approvers", c.Approvers, false},
	} {
		for _, id := range l.ids {
			if id == "" && l.key == "discord.application_id" || id == "*" && l.star {
				continue
			}
			if !snowflake(id) {
				return c, fmt.Errorf("discord: %s: %q is not a Discord id (a number, quoted in YAML)", l.key, id)
			}
		}
	}
	return c, nil
}

func snowflake(id string) bool {
	if id == "" || len(id) > 20 {
		return false
	}
	for _, r := range id {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func listed(list []string, id string) bool {
	return id != "" && (slices.Contains(list, id) || slices.Contains(list, "*"))
}

// allowsGuild reports whether the bot may answer somewhere in a guild;
// it is known without looking the channel up.
func (c Config) allowsGuild(guild string) bool {
	if guild == "" || len(c.Guilds) == 0 && len(c.Channels) == 0 {
		return false
	}
	return len(c.Guilds) == 0 || listed(c.Guilds, guild)
}

// allowsPlace reports whether the bot answers in a guild channel (for a
// thread: its parent).
func (c Config) allowsPlace(guild, channel string) bool {
	return c.allowsGuild(guild) && (len(c.Channels) == 0 || listed(c.Channels, channel))
}

// allowsDM reports whether user may talk to the bot in a direct message.
func (c Config) allowsDM(user string) bool { return listed(c.AllowedUsers, user) }

// commandGuilds returns the guilds to register the slash command in; nil
// means globally.
func (c Config) commandGuilds() []string {
	if len(c.Guilds) == 0 || slices.Contains(c.Guilds, "*") {
		return nil
	}
	return c.Guilds
}
