package config

import (
	"slices"
	"strings"
	"testing"
)

func TestKeyPathsAreTheEnvironmentOverrides(t *testing.T) {
	keys := KeyPaths()
	for _, want := range []string{"llm.base_url", "store.url", "server.listen", "slack.bot_token", "telegram.token", "schedules"} {
		if !slices.Contains(keys, want) {
			t.Errorf("KeyPaths lacks %s: %v", want, keys)
		}
	}
	// Every key path is one an environment variable really sets.
	for _, k := range []string{"store.url", "server.listen", "llm.model"} {
		c, err := Load("", func(name string) string {
			if name == EnvName(k) {
				switch k {
				case "store.url":
					return "sqlite:///tmp/x.db"
				case "server.listen":
					return "0.0.0.0:9999"
				}
				return "some-model"
			}
			return ""
		})
		if err != nil {
			t.Fatalf("%s: %v", EnvName(k), err)
		}
		if c.Store.URL != "sqlite:///tmp/x.db" && c.Server.Listen != "0.0.0.0:9999" && c.LLM.Model != "some-model" {
			t.Errorf("%s did not set %s", EnvName(k), k)
		}
	}
}

// Issue 20 (8e): an OPSGATE_ variable opsgate does not read is named, with
// the closest known variable, or the known ones of its section; the known
// ones (every key's, OPSGATE_CONFIG, OPSGATE_LOG_LEVEL) and variables of
// other programs are not.
func TestUnknownEnvSuggestsTheKnownVariable(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin",
		"OPSGATE_LLM_BASE_URL=http://x/v1",
		"OPSGATE_LLM_BASEURL=http://x/v1",
		"OPSGATE_TELEGRAM_TOKNE=t",
		"OPSGATE_CONFIG=/etc/opsgate.yaml",
		"OPSGATE_LOG_LEVEL=debug",
		"OPSGATE_SCHEDULES=[]",
		"OPSGATE_TOKEN=og_1",
		"OPSGATE_SLACK_WEBHOOK=https://hooks",
		"OPSGATE_FLUX=1",
		"OPSGATE_LLM_BASEURL=again",
	}
	got := UnknownEnv(environ)
	want := []string{
		"OPSGATE_FLUX is set, but opsgate reads no such variable; it reads OPSGATE_CONFIG, OPSGATE_LOG_LEVEL and OPSGATE_<SECTION>_<KEY> for each configuration key, SECTION one of LLM, STORE, MEMORY, SESSION, TOOLS, APPROVALS, SERVER, POLICY, TELEGRAM, SLACK, DISCORD, SCHEDULES, INCIDENTS",
		"OPSGATE_LLM_BASEURL is set, but opsgate reads no such variable; did you mean OPSGATE_LLM_BASE_URL?",
		"OPSGATE_SLACK_WEBHOOK is set, but opsgate reads no such variable; the OPSGATE_SLACK_ variables are OPSGATE_SLACK_ENABLED, OPSGATE_SLACK_BOT_TOKEN, OPSGATE_SLACK_APP_TOKEN, OPSGATE_SLACK_SIGNING_SECRET, OPSGATE_SLACK_API_URL, OPSGATE_SLACK_CHANNELS, OPSGATE_SLACK_ALLOWED_USERS, OPSGATE_SLACK_APPROVERS",
		"OPSGATE_TELEGRAM_TOKNE is set, but opsgate reads no such variable; did you mean OPSGATE_TELEGRAM_TOKEN?",
	}
	if !slices.Equal(got, want) {
		t.Errorf("UnknownEnv:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, k := range []string{"OPSGATE_CONFIG", "OPSGATE_LOG_LEVEL", "OPSGATE_LLM_BASE_URL", "OPSGATE_TOOLS_SERVERS", "OPSGATE_SCHEDULES"} {
		if !slices.Contains(KnownEnv(), k) {
			t.Errorf("KnownEnv lacks %s", k)
		}
	}
}
