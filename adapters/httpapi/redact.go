package httpapi

import (
	"bytes"
	"encoding/json"
)

// redactJSON encodes v with every string in it, object keys included,
// passed through redact. Redacting the decoded strings rather than the
// encoded bytes keeps the JSON valid whatever a pattern matches, and
// reaches strings nested in raw JSON (approval arguments) too.
func redactJSON(v any, redact func(string) string) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(redactTree(tree, redact)); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func redactTree(v any, redact func(string) string) any {
	switch v := v.(type) {
	case string:
		return redact(v)
	case []any:
		for i := range v {
			v[i] = redactTree(v[i], redact)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[redact(k)] = redactTree(x, redact)
		}
		return out
	default:
		return v
	}
}
