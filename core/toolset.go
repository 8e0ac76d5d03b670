package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// LoadToolsetTool is the virtual tool that loads a toolset into the
// conversation. It runs in-process, never needs approval, and takes effect on
// the next model call.
const LoadToolsetTool = "load_toolset"

// loadToolsetTool is the engine's own virtual tool.
type loadToolsetTool struct{ e *Engine }

func (t loadToolsetTool) Schema() ToolSchema { return t.e.loadToolsetSchema() }
func (loadToolsetTool) Toolset() string      { return "" }
func (t loadToolsetTool) Call(ctx context.Context, c VirtualCall) ToolResult {
	return t.e.loadToolset(context.WithoutCancel(ctx), c.rs, c.Arguments)
}

// toolsets are the names load_toolset offers: the MCP servers', then the
// virtual toolsets ("memory").
func (e *Engine) toolsets() []string {
	return append(e.tools.Toolsets(), e.virtualToolsets()...)
}

// catalogue returns the tool schemas for this model call and notes for the
// model about toolsets that are unavailable (which the user is told about
// too, once per run: the agent never silently goes on without them).
func (e *Engine) catalogue(ctx context.Context, rs *runState) ([]ToolSchema, []string) {
	rs.offered, rs.withheld = map[string]Tool{}, map[string]Tool{}
	var schemas []ToolSchema
	var notes []string
	loaded := map[string]bool{}
	for _, ts := range rs.toolsets {
		loaded[ts.Name] = true
		if slices.Contains(e.virtualToolsets(), ts.Name) {
			continue // offered with the other virtual tools below
		}
		tools, err := e.tools.Tools(ctx, ts.Name)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil
			}
			notes = append(notes, fmt.Sprintf("The toolset %q is unavailable right now (%v). Tell the user; do not guess what its tools would return.", ts.Name, err))
			if rs.reported == nil {
				rs.reported = map[string]bool{}
			}
			if !rs.reported[ts.Name] {
				rs.reported[ts.Name] = true
				msg := err.Error()
				var ue *UnavailableError
				if !errors.As(err, &ue) {
					msg = fmt.Sprintf("MCP server %q failed: %v", ts.Name, err)
				}
				rs.out.emit(rs.run.ID, Event{Type: EventToolError, Call: &CallInfo{Toolset: ts.Name}, Error: msg})
			}
			continue
		}
		for _, t := range tools {
			if _, virtual := e.virtual[t.Name]; virtual {
				continue // the in-process tool of that name wins
			}
			if t.Risk.NeedsApproval() && !ts.Write {
				rs.withheld[t.Name] = t
				continue
			}
			rs.offered[t.Name] = t
			schemas = append(schemas, t.Schema())
		}
	}
	// Virtual tools: those of loaded virtual toolsets, then those always
	// offered, in registration order (load_toolset last).
	for _, vt := range e.virtualOrder {
		if ts := vt.Toolset(); ts == "" || loaded[ts] {
			sc := vt.Schema()
			rs.offered[sc.Name] = Tool{Name: sc.Name, Remote: sc.Name, Toolset: ts, Risk: RiskRead, InProcess: true,
				Description: sc.Description, InputSchema: sc.Parameters}
			schemas = append(schemas, sc)
		}
	}
	return schemas, notes
}

func (e *Engine) loadToolsetSchema() ToolSchema {
	names := e.toolsets()
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"toolset": map[string]any{"type": "string", "enum": names, "description": "the toolset to load"},
			"include_write_tools": map[string]any{"type": "boolean",
				"description": "also load tools that change things; each call of those still needs a human's approval"},
		},
		"required":             []string{"toolset"},
		"additionalProperties": false,
	}
	return ToolSchema{
		Name: LoadToolsetTool,
		Description: "Load more tools. Available toolsets: " + strings.Join(names, ", ") +
			". Read-only tools are loaded unless include_write_tools is true. The tools appear on your next step.",
		Parameters: mustJSON(schema),
	}
}

// loadToolset runs the virtual tool.
func (e *Engine) loadToolset(ctx context.Context, rs *runState, args json.RawMessage) ToolResult {
	var a struct {
		Toolset string `json:"toolset"`
		Write   bool   `json:"include_write_tools"`
	}
	if err := json.Unmarshal(orEmptyObject(args), &a); err != nil {
		return ToolResult{IsError: true, Content: "invalid arguments for load_toolset: " + err.Error()}
	}
	names := e.toolsets()
	if !slices.Contains(names, a.Toolset) {
		return ToolResult{IsError: true, Content: fmt.Sprintf("unknown toolset %q; available toolsets: %s", a.Toolset, strings.Join(names, ", "))}
	}
	i := slices.IndexFunc(rs.toolsets, func(t Toolset) bool { return t.Name == a.Toolset })
	changed := true
	switch {
	case i < 0:
		rs.toolsets = append(rs.toolsets, Toolset{Name: a.Toolset, Write: a.Write})
	case a.Write && !rs.toolsets[i].Write:
		rs.toolsets[i].Write = true
	default:
		changed = false // loaded already: nothing to store
	}
	if changed {
		conv, err := e.store.Conversation(ctx, rs.run.ConvKey)
		if err == nil {
			conv.Toolsets = rs.toolsets
			err = e.store.Apply(ctx, Batch{Conversation: &conv})
		}
		if err != nil {
			e.log.Error("store loaded toolsets", "conv", rs.run.ConvKey, "err", err)
		}
	}
	kind := "its read-only tools"
	if a.Write {
		kind = "its read and write tools (write tools need a human's approval for every call)"
	}
	return ToolResult{Content: fmt.Sprintf("Loaded toolset %q with %s. They are available from your next step.", a.Toolset, kind)}
}

// resolve turns the model's tool calls into a batch: each call is matched to
// an offered tool and its arguments validated. Calls that cannot run get
// their error result now; they are never shown for approval or executed.
func (e *Engine) resolve(rs *runState, calls []ToolCall) []PendingCall {
	batch := make([]PendingCall, 0, len(calls))
	for _, c := range calls {
		if !json.Valid(orEmptyObject(c.Arguments)) {
			// A model can emit broken JSON. Keep it as a JSON string so the
			// call can still be stored in checkpoints and shown in events;
			// it is answered with an error and never run.
			c.Arguments = mustJSON(string(c.Arguments))
			pc := PendingCall{Call: c, Tool: Tool{Name: c.Name, Risk: RiskWrite},
				Result: &ToolResult{IsError: true, Content: fmt.Sprintf("invalid arguments for %s, nothing was run: the arguments are not valid JSON. Send a JSON object.", c.Name)}}
			batch = append(batch, pc)
			continue
		}
		pc := PendingCall{Call: c}
		t, ok := rs.offered[c.Name]
		if ok && t.InProcess {
			// Checked by the tool itself; never asks, never audited as a run.
			pc.Tool = t
			pc.Tool.Description, pc.Tool.InputSchema = "", nil
			batch = append(batch, pc)
			continue
		}
		if !ok {
			pc.Tool = Tool{Name: c.Name, Risk: RiskWrite}
			pc.Result = &ToolResult{IsError: true, Content: e.unknownToolText(c.Name, rs)}
			e.stageAudit(rs, refusedCall(rs, c.Name))
			batch = append(batch, pc)
			continue
		}
		pc.Tool = t
		if err := e.tools.Validate(t, c.Arguments); err != nil {
			pc.Result = &ToolResult{IsError: true, Content: fmt.Sprintf("invalid arguments for %s, nothing was run: %v. Fix the arguments and call it again.", c.Name, err)}
		} else if canon, err := CanonicalJSON(c.Arguments); err == nil {
			pc.Call.Arguments = canon
			e.classify(rs, &pc)
		} else {
			pc.Result = &ToolResult{IsError: true, Content: fmt.Sprintf("invalid arguments for %s, nothing was run: %v", c.Name, err)}
		}
		batch = append(batch, pc)
	}
	return batch
}

// classify asks the policy about a valid call, once. A denied call gets its
// result now (the rule's name and reason) and an audit entry; it is never
// shown for approval. A policy can only tighten: a read verdict for a call
// whose risk needs approval is taken as an ask, whatever the policy says.
func (e *Engine) classify(rs *runState, pc *PendingCall) {
	v := e.cfg.Policy.Classify(PolicyCall{
		Server: pc.Tool.Toolset, Tool: pc.Tool.Remote, Arguments: pc.Call.Arguments, Risk: pc.Tool.Risk,
		Requester: rs.run.Requester, ConvKey: rs.run.ConvKey,
	})
	switch {
	case v.Action == ActionDeny:
		pc.Result = &ToolResult{IsError: true, Content: v.Denial() + ". Nothing was run; do not try to get around this rule."}
		e.stageAudit(rs, AuditEntry{Kind: AuditPolicy, ConvKey: rs.run.ConvKey, RunID: rs.run.ID, Actor: rs.run.Requester,
			Toolset: pc.Tool.Toolset, Tool: pc.Tool.Remote, Risk: pc.Tool.Risk, Detail: v.Denial()})
	case v.Action == ActionRead && pc.Tool.Risk.NeedsApproval(), v.Action != ActionRead && v.Action != ActionAsk:
		v.Action = ActionAsk
		v.Quorum = max(v.Quorum, 1)
	}
	pc.Verdict = v
}

func (e *Engine) unknownToolText(name string, rs *runState) string {
	var loaded []string
	for n := range rs.offered {
		loaded = append(loaded, n)
	}
	slices.Sort(loaded)
	return fmt.Sprintf("unknown tool %q: it is not among the loaded tools (%s). Use load_toolset to load more tools (include_write_tools for tools that change things); nothing was run.",
		name, strings.Join(loaded, ", "))
}

// refusedCall is the audit entry of a call of a tool the model was not
// given: a name it made up, or a write tool of a toolset loaded read-only.
// Nothing ran, but a model reaching for tools it does not have is worth a
// line in the record.
func refusedCall(rs *runState, name string) AuditEntry {
	entry := AuditEntry{Kind: AuditRefused, ConvKey: rs.run.ConvKey, RunID: rs.run.ID,
		Actor: rs.run.Requester, Tool: name,
		Detail: fmt.Sprintf("model called unknown tool %q: no loaded toolset offers it; nothing was run", name)}
	if t, ok := rs.withheld[name]; ok {
		entry.Toolset, entry.Tool, entry.Risk = t.Toolset, t.Remote, t.Risk
		entry.Detail = fmt.Sprintf("model called %s tool %q of toolset %q, which is loaded read-only; nothing was run", t.Risk, name, t.Toolset)
	}
	return entry
}

func orEmptyObject(b json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(b))) == 0 {
		return json.RawMessage("{}")
	}
	return b
}
