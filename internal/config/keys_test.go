package config

import (
	"slices"
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
