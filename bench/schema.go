package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
)

// Figure 7 targets.
const (
	schemaDefaultMax   = 1500
	schemaDefaultShare = 0.20
)

// schemaCount is the tools array of one first model call, counted.
type schemaCount struct {
	tools   int
	tokens  int
	perTool map[string]int // tokens of each element, by function name
	raw     []json.RawMessage
}

// ToolSchemaTokens is figure 7: the tokens of the tools array sent on the
// first model call of a conversation with default_toolsets [k8s], against
// the same with all four realistic toolsets loaded, write tools included.
// The array is counted as the request body carries it, byte for byte.
func ToolSchemaTokens(ctx context.Context) ([]Row, error) {
	s, err := newStack(stackConfig{})
	if err != nil {
		return nil, err
	}
	defer s.close()
	s.llm.SetResponder(func(llmfake.Request) llmfake.Reply { return llmfake.Reply{Text: "Looking into it."} })

	first := func(conv string, loaded []core.Toolset) (schemaCount, error) {
		if loaded != nil {
			if err := s.store.Apply(ctx, core.Batch{Conversation: &core.Conversation{Key: conv, Toolsets: loaded}}); err != nil {
				return schemaCount{}, err
			}
		}
		n := len(s.llm.Requests())
		if err := s.say(ctx, conv, "What is failing in prod right now?"); err != nil {
			return schemaCount{}, err
		}
		reqs := s.llm.Requests()
		if len(reqs) <= n {
			return schemaCount{}, fmt.Errorf("bench: %s: no model request", conv)
		}
		return countSchemas(reqs[n].Raw)
	}
	def, err := first("schema:default", nil)
	if err != nil {
		return nil, err
	}
	var allW, allR []core.Toolset
	for _, rs := range s.servers {
		allW = append(allW, core.Toolset{Name: rs.Name, Write: true})
		allR = append(allR, core.Toolset{Name: rs.Name})
	}
	all, err := first("schema:all", allW)
	if err != nil {
		return nil, err
	}
	reads, err := first("schema:all-read", allR)
	if err != nil {
		return nil, err
	}

	// What core/tools' compaction saved, and what trimming further would
	// do, to both sides of the ratio. Every variant is re-encoded the same
	// way, so the as-sent array is counted again as "compacted".
	type variant struct {
		name string
		edit func(map[string]any)
	}
	variants := []variant{
		{"as the servers wrote them", serversOwn(s.servers)},
		{"compacted", func(map[string]any) {}},
		{"property descriptions capped at 40 chars", capPropertyDescriptions(40)},
		{"no property descriptions", capPropertyDescriptions(0)},
		{"tool descriptions cut to their first sentence", firstSentenceOnly},
	}
	share := float64(def.tokens) / float64(all.tokens)
	metrics := map[string]float64{
		"default_tokens": float64(def.tokens), "default_tools": float64(def.tools),
		"all_loaded_tokens": float64(all.tokens), "all_loaded_tools": float64(all.tools),
		"all_read_only_tokens": float64(reads.tokens), "all_read_only_tools": float64(reads.tools),
		"default_share":       share,
		"load_toolset_tokens": float64(def.perTool[core.LoadToolsetTool]),
	}
	var whatIf []string
	for i, v := range variants {
		d, err := countVariant(def.raw, v.edit)
		if err != nil {
			return nil, err
		}
		a, err := countVariant(all.raw, v.edit)
		if err != nil {
			return nil, err
		}
		metrics[fmt.Sprintf("variant%d_default_tokens", i+1)] = float64(d)
		metrics[fmt.Sprintf("variant%d_all_loaded_tokens", i+1)] = float64(a)
		whatIf = append(whatIf, fmt.Sprintf("%s: %d tokens, %.1f%%", v.name, d, 100*float64(d)/float64(a)))
	}
	note := fmt.Sprintf("tools array of the 1st request, %s; heaviest: %s; core/tools sends each description in a schema cut to its first sentence "+
		"and 64 characters, without $schema, redundant titles or an empty required (every constraint kept; arguments are validated against the full schema)",
		Encoding, heaviest(def.perTool, 3))
	if def.tokens > schemaDefaultMax || share > schemaDefaultShare {
		note += fmt.Sprintf("; cause: the %d read-only k8s tools carry kubernetes-mcp-server-style descriptions, %d tokens each on average, "+
			"and the shared selector descriptions repeat in several tools",
			def.tools-1, (def.tokens-def.perTool[core.LoadToolsetTool])/max(def.tools-1, 1))
	}
	note += ". Re-encoded alike: " + strings.Join(whatIf, "; ")
	return []Row{
		{
			Figure:   "7. tool-schema tokens, 1st call, default_toolsets [k8s]",
			Measured: fmt.Sprintf("%d tokens (%d tools incl. load_toolset)", def.tokens, def.tools),
			Target:   fmt.Sprintf("<= %d", schemaDefaultMax),
			Result:   verdict(def.tokens <= schemaDefaultMax),
			Note:     note,
			Metrics:  metrics,
		},
		{
			Figure:   "7. default vs every toolset loaded",
			Measured: fmt.Sprintf("%.1f%% (%d of %d tokens; %d tools loaded)", 100*share, def.tokens, all.tokens, all.tools),
			Target:   fmt.Sprintf("<= %.0f%%", 100*schemaDefaultShare),
			Result:   verdict(share <= schemaDefaultShare),
			Note: fmt.Sprintf("all 4 toolsets with write tools; read-only tools of all 4: %d tokens. The default offers %d of %d tools plus load_toolset (%d tokens, sent either way); "+
				"its k8s reads average %d tokens, all %d tools %d",
				reads.tokens, def.tools-1, all.tools-1, def.perTool[core.LoadToolsetTool],
				(def.tokens-def.perTool[core.LoadToolsetTool])/max(def.tools-1, 1), all.tools-1,
				(all.tokens-all.perTool[core.LoadToolsetTool])/max(all.tools-1, 1)),
		},
	}, nil
}

func countSchemas(raw []byte) (schemaCount, error) {
	b, err := parseBody(raw)
	if err != nil {
		return schemaCount{}, err
	}
	c := schemaCount{perTool: map[string]int{}}
	if c.tokens, err = countTokens(string(b.Tools)); err != nil {
		return c, err
	}
	if c.raw, err = b.tools(); err != nil {
		return c, err
	}
	c.tools = len(c.raw)
	for _, t := range c.raw {
		var f struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(t, &f); err != nil {
			return c, err
		}
		n, err := countTokens(string(t))
		if err != nil {
			return c, err
		}
		c.perTool[f.Function.Name] = n
	}
	return c, nil
}

// countVariant counts the tools array after edit changed each tool, to say
// what trimming would save. Both sides are re-encoded the same way.
func countVariant(tools []json.RawMessage, edit func(fn map[string]any)) (int, error) {
	var out []any
	for _, t := range tools {
		var m map[string]any
		if err := json.Unmarshal(t, &m); err != nil {
			return 0, err
		}
		if fn, ok := m["function"].(map[string]any); ok {
			edit(fn)
		}
		out = append(out, m)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return 0, err
	}
	return countTokens(strings.TrimSpace(buf.String()))
}

// capPropertyDescriptions cuts property descriptions to n characters at a
// word boundary; 0 removes them.
func capPropertyDescriptions(n int) func(map[string]any) {
	return func(fn map[string]any) {
		params, _ := fn["parameters"].(map[string]any)
		props, _ := params["properties"].(map[string]any)
		for _, p := range props {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			d, _ := pm["description"].(string)
			switch {
			case n == 0:
				delete(pm, "description")
			case len(d) > n:
				cut := d[:n]
				if i := strings.LastIndexByte(cut, ' '); i > 0 {
					cut = cut[:i]
				}
				pm["description"] = cut + "…"
			}
		}
	}
}

// serversOwn puts back each tool's description and input schema as its
// server listed them, to count what core/tools' compaction saves.
func serversOwn(servers []mcpfake.RealisticServer) func(map[string]any) {
	own := map[string]map[string]any{}
	for _, rs := range servers {
		for name, st := range rs.Server.ListTools() {
			b, err := json.Marshal(st.Tool.InputSchema)
			if err != nil {
				continue
			}
			var params map[string]any
			if json.Unmarshal(b, &params) == nil {
				own[name] = map[string]any{"description": st.Tool.Description, "parameters": params}
			}
		}
	}
	return func(fn map[string]any) {
		name, _ := fn["name"].(string)
		if o, ok := own[name]; ok {
			fn["description"], fn["parameters"] = o["description"], o["parameters"]
		}
	}
}

func firstSentenceOnly(fn map[string]any) {
	if d, ok := fn["description"].(string); ok {
		if i := strings.Index(d, ". "); i > 0 {
			fn["description"] = d[:i+1]
		}
	}
}

func heaviest(perTool map[string]int, n int) string {
	type kv struct {
		name string
		n    int
	}
	var all []kv
	for k, v := range perTool {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n || all[i].n == all[j].n && all[i].name < all[j].name })
	var parts []string
	for _, e := range all[:min(n, len(all))] {
		parts = append(parts, fmt.Sprintf("%s %d", e.name, e.n))
	}
	return strings.Join(parts, ", ")
}
