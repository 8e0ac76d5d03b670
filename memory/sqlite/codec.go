package sqlite

import (
	"encoding/json"

	"github.com/opsgate/opsgate/core"
)

// The types below are how values with raw JSON are stored in JSON columns.
// encoding/json would compact a json.RawMessage and refuse a malformed one,
// but a model's arguments must come back exactly as it wrote them, broken or
// not: the raw JSON is kept as a string. Each type embeds its core type and
// shadows only the raw field, so fields added to core later are stored too.

type storedCall struct {
	core.ToolCall
	Arguments string `json:"arguments"`
}

func toStoredCall(c core.ToolCall) storedCall {
	return storedCall{ToolCall: c, Arguments: string(c.Arguments)}
}

func (c storedCall) call() core.ToolCall {
	tc := c.ToolCall
	tc.Arguments = rawJSON(c.Arguments)
	return tc
}

type storedTool struct {
	core.Tool
	InputSchema string `json:"input_schema"`
}

type storedPending struct {
	core.PendingCall
	Call storedCall `json:"call"`
	Tool storedTool `json:"tool"`
}

// rawJSON returns s as json.RawMessage, nil when empty.
func rawJSON(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// encodeCalls returns the JSON of calls, or nil (NULL) when there are none.
func encodeCalls(calls []core.ToolCall) (any, error) {
	if len(calls) == 0 {
		return nil, nil
	}
	sc := make([]storedCall, len(calls))
	for i, c := range calls {
		sc[i] = toStoredCall(c)
	}
	b, err := json.Marshal(sc)
	return string(b), err
}

func decodeCalls(s string) ([]core.ToolCall, error) {
	if s == "" {
		return nil, nil
	}
	var sc []storedCall
	if err := json.Unmarshal([]byte(s), &sc); err != nil {
		return nil, err
	}
	calls := make([]core.ToolCall, len(sc))
	for i, c := range sc {
		calls[i] = c.call()
	}
	return calls, nil
}

func encodePending(ps []core.PendingCall) (string, error) {
	sp := make([]storedPending, len(ps))
	for i, p := range ps {
		sp[i] = storedPending{
			PendingCall: p,
			Call:        toStoredCall(p.Call),
			Tool:        storedTool{Tool: p.Tool, InputSchema: string(p.Tool.InputSchema)},
		}
	}
	b, err := json.Marshal(sp)
	return string(b), err
}

func decodePending(s string) ([]core.PendingCall, error) {
	var sp []storedPending
	if err := json.Unmarshal([]byte(s), &sp); err != nil {
		return nil, err
	}
	ps := make([]core.PendingCall, len(sp))
	for i, p := range sp {
		ps[i] = p.PendingCall
		ps[i].Call = p.Call.call()
		ps[i].Tool = p.Tool.Tool
		ps[i].Tool.InputSchema = rawJSON(p.Tool.InputSchema)
	}
	return ps, nil
}

func encodeToolsets(ts []core.Toolset) (string, error) {
	if ts == nil {
		ts = []core.Toolset{}
	}
	b, err := json.Marshal(ts)
	return string(b), err
}

func decodeToolsets(s string) ([]core.Toolset, error) {
	var ts []core.Toolset
	err := json.Unmarshal([]byte(s), &ts)
	return ts, err
}
