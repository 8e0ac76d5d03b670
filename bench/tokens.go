package bench

import (
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/opsgate/opsgate/internal/tokens"
)

// Encoding is the tokenizer every token figure uses (internal/tokens).
const Encoding = tokens.Encoding

// countTokens returns the number of cl100k_base tokens of s.
func countTokens(s string) (int, error) {
	if err := tokens.Err(); err != nil {
		return 0, fmt.Errorf("bench: tokenizer %s: %w", Encoding, err)
	}
	return tokens.Count(s), nil
}

// body is the part of a chat request body the token figures count: the
// fields exactly as the client serialised them, byte for byte.
type body struct {
	Messages json.RawMessage `json:"messages"`
	Tools    json.RawMessage `json:"tools"`
}

func parseBody(raw []byte) (body, error) {
	var b body
	if err := json.Unmarshal(raw, &b); err != nil {
		return b, fmt.Errorf("bench: request body: %w", err)
	}
	return b, nil
}

// tools splits the tools array into its elements, for per-tool counts.
func (b body) tools() ([]json.RawMessage, error) {
	var ts []json.RawMessage
	if len(b.Tools) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(b.Tools, &ts); err != nil {
		return nil, fmt.Errorf("bench: tools array: %w", err)
	}
	return ts, nil
}

// seq gives unique message ids across stacks.
var seq atomic.Int64

func newMessageID() string { return fmt.Sprintf("bench-%d", seq.Add(1)) }
