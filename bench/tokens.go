package bench

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding is the tokenizer every token figure uses: OpenAI's cl100k_base
// (GPT-4, GPT-3.5-turbo), with its BPE ranks embedded in the binary by
// tiktoken-go-loader, so counting never touches the network.
const Encoding = "cl100k_base"

var (
	encOnce sync.Once
	enc     *tiktoken.Tiktoken
	encErr  error
)

// countTokens returns the number of cl100k_base tokens of s.
func countTokens(s string) (int, error) {
	encOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
		enc, encErr = tiktoken.GetEncoding(Encoding)
	})
	if encErr != nil {
		return 0, fmt.Errorf("bench: tokenizer %s: %w", Encoding, encErr)
	}
	return len(enc.EncodeOrdinary(s)), nil
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
