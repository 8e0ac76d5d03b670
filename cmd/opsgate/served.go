package main

import (
	"fmt"

	"github.com/opsgate/opsgate/internal/config"
)

// startedSchedules names the schedules serve runs. Schedules do not run in
// this build yet (serve warns about configured ones), so it names none;
// when they do, it names those, and they count as something to serve.
func startedSchedules(*config.Config) []string { return nil }

// nothingToServe is the one rule serve and doctor share: a server with no
// chat adapter and no schedule answers nobody, which must not pass for a
// healthy deployment. empty is false when there is something to serve.
func nothingToServe(cfg *config.Config) (what, fix string, empty bool) {
	if len(cfg.Adapters()) > 0 || len(startedSchedules(cfg)) > 0 {
		return "", "", false
	}
	what = "nothing to serve: no chat adapter is enabled and no schedule runs"
	if n := len(cfg.Schedules); n > 0 {
		what += fmt.Sprintf(" (the %d configured schedule(s) do not run in this build yet)", n)
	}
	fix = "set telegram.token, slack.bot_token or discord.token, " +
		"or start opsgate serve --allow-empty for a standby or a /healthz-only check"
	return what, fix, true
}
