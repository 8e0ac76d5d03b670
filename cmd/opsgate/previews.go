package main

import (
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/core/tools/preview"
	"github.com/opsgate/opsgate/internal/config"
)

// previewer builds the previews of approval cards (docs/design.md §18):
// the built-in ones, recognised by serverInfo name, and the recipes of
// tools.servers[].previews by toolset.
func previewer(cfg *config.Config, host *tools.Host) core.Previewer {
	recipes := map[string][]preview.Recipe{}
	for _, s := range cfg.Tools.Servers {
		for _, r := range s.Previews {
			recipes[s.Name] = append(recipes[s.Name], preview.Recipe{
				Tool: r.Tool, Read: r.Read, Args: r.Args, Field: r.Field, Value: r.Value,
			})
		}
	}
	return preview.New(host, recipes)
}
