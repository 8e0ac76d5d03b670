// Package codec is how both stores (memory/sqlite, memory/postgres) keep
// values that hold raw JSON in text columns, so that they read back what
// the other would: a model's arguments come back byte for byte, broken or
// not.
package codec

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
	tc.Arguments = RawJSON(c.Arguments)
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

// RawJSON returns s as json.RawMessage, nil when empty.
func RawJSON(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// EncodeCalls returns the JSON of calls, or nil (NULL) when there are none.
func EncodeCalls(calls []core.ToolCall) (any, error) {
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

// DecodeCalls is the inverse of EncodeCalls; "" (NULL) is none.
func DecodeCalls(s string) ([]core.ToolCall, error) {
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

// EncodePending returns the JSON of a checkpoint's pending calls.
func EncodePending(ps []core.PendingCall) (string, error) {
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

// DecodePending is the inverse of EncodePending.
func DecodePending(s string) ([]core.PendingCall, error) {
	var sp []storedPending
	if err := json.Unmarshal([]byte(s), &sp); err != nil {
		return nil, err
	}
	ps := make([]core.PendingCall, len(sp))
	for i, p := range sp {
		ps[i] = p.PendingCall
		ps[i].Call = p.Call.call()
		ps[i].Tool = p.Tool.Tool
		ps[i].Tool.InputSchema = RawJSON(p.Tool.InputSchema)
	}
	return ps, nil
}

// EncodeToolsets returns the JSON of ts, "[]" for none.
func EncodeToolsets(ts []core.Toolset) (string, error) {
	if ts == nil {
		ts = []core.Toolset{}
	}
	b, err := json.Marshal(ts)
	return string(b), err
}

// DecodeToolsets is the inverse of EncodeToolsets.
func DecodeToolsets(s string) ([]core.Toolset, error) {
	var ts []core.Toolset
	err := json.Unmarshal([]byte(s), &ts)
	return ts, err
}

// EncodeVerdict is the JSON of v, or "" for none (approvals made before
// policies, and by stores' tests).
func EncodeVerdict(v core.Verdict) (string, error) {
	if v.Action == "" {
		return "", nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// DecodeVerdict is the inverse of EncodeVerdict.
func DecodeVerdict(s string) (core.Verdict, error) {
	var v core.Verdict
	if s == "" {
		return v, nil
	}
	err := json.Unmarshal([]byte(s), &v)
	return v, err
}

// EncodePreview is the JSON of p, or "" for none (docs/design.md §18).
func EncodePreview(p *core.Preview) (string, error) {
	if p == nil {
		return "", nil
	}
	b, err := json.Marshal(p)
	return string(b), err
}

// DecodePreview is the inverse of EncodePreview.
func DecodePreview(s string) (*core.Preview, error) {
	if s == "" {
		return nil, nil
	}
	var p core.Preview
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return nil, err
	}
	return &p, nil
}
