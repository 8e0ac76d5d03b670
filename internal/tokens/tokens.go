// Package tokens counts tokens the way every opsgate figure does: OpenAI's
// cl100k_base (GPT-4, GPT-3.5-turbo), with its BPE ranks embedded in the
// binary, so counting never touches the network. memory.token_budget and
// the bench's token figures use it.
package tokens

import (
	"sync"

	"github.com/pkoukk/tiktoken-go"
)

// Encoding is the tokenizer's name.
const Encoding = "cl100k_base"

var (
	encOnce sync.Once
	enc     *tiktoken.Tiktoken
	encErr  error
)

func encoding() (*tiktoken.Tiktoken, error) {
	encOnce.Do(func() {
		tiktoken.SetBpeLoader(embeddedRanks{})
		enc, encErr = tiktoken.GetEncoding(Encoding)
	})
	return enc, encErr
}

// Count returns the number of cl100k_base tokens of s. Should the embedded
// ranks fail to load (they cannot, short of a broken build), it falls back
// to one token per 4 bytes, rounded up: a budget is then still kept
// roughly rather than not at all.
func Count(s string) int {
	e, err := encoding()
	if err != nil {
		return (len(s) + 3) / 4
	}
	return len(e.EncodeOrdinary(s))
}

// Err reports whether the tokenizer loaded (for doctor and the bench).
func Err() error {
	_, err := encoding()
	return err
}
