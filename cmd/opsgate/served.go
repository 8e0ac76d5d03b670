package main

import (
	"github.com/opsgate/opsgate/internal/config"
)

// startedSchedules names the schedules serve runs; they count as
// something to serve.
func startedSchedules(cfg *config.Config) []string {
	var names []string
	for _, s := range cfg.Schedules {
		names = append(names, s.Name)
	}
	return names
}

// nothingToServe is the one rule serve and doctor share: a server with no
// chat adapter and no schedule answers nobody, which must not pass for a
// healthy deployment. empty is false when there is something to serve.
func nothingToServe(cfg *config.Config) (what, fix string, empty bool) {
	if len(cfg.Adapters()) > 0 || len(startedSchedules(cfg)) > 0 {
		return "", "", false
	}
	what = "nothing to serve: no chat adapter is enabled and no schedule runs"
	fix = "set telegram.token, slack.bot_token or discord.token, " +
		"or start opsgate serve --allow-empty for a standby or a /healthz-only check"
	return what, fix, true
}
