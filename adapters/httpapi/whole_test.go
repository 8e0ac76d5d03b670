package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// Issue 20, acceptance 6 (streams): a third-party client that renders the
// token frames of a POST's stream, read raw as `curl -N` shows them, gets
// the whole answer: for answers of 1, 7 and 40 words in chunks of 1–3
// characters, with and without a secret (as its last word, where the
// redactor holds it back), the token texts of a generation add up to its
// generation.complete text, and no token frame has empty text.
func TestSSETokensAddUpToTheAnswer(t *testing.T) {
	r := newRig(t)
	secret := "ghp_" + strings.Repeat("Ab3dE", 7) + "x"
	i := 0
	for _, n := range []int{1, 7, 40} {
		for _, withSecret := range []bool{false, true} {
			for _, chunk := range []int{2, 3} {
				i++
				t.Run(fmt.Sprintf("%d words secret=%v chunks 1-%d", n, withSecret, chunk), func(t *testing.T) {
					w := make([]string, n)
					for j := range w {
						w[j] = fmt.Sprintf("w%d", j+1)
					}
					if withSecret {
						w[n-1] = secret
					}
					answer := strings.Join(w, " ")
					r.stack.LLM.Push(llmfake.Reply{Text: answer, SplitChars: chunk})
					s := r.open(r.tokens["alice"], "POST", "/api/v1/conversations/"+url.PathEscape(fmt.Sprintf("api:whole-%d", i))+"/messages", "", `{"text":"status?"}`)
					var (
						tokens []string
						gens   int
						raw    strings.Builder
					)
					for {
						ev, err := s.Next()
						if err != nil {
							break // the server ends the stream after completed
						}
						raw.WriteString(ev.Raw)
						switch ev.Name {
						case "generation.start":
							tokens = nil
						case "token":
							var data struct {
								Text *string `json:"text"`
							}
							if err := json.Unmarshal([]byte(strings.TrimPrefix(dataLine(ev.Raw), "data: ")), &data); err != nil {
								t.Fatal(err)
							}
							if data.Text == nil || *data.Text == "" {
								t.Errorf("token frame without text: %q", ev.Raw)
							}
							tokens = append(tokens, ev.Data.Text)
						case "generation.complete":
							gens++
							if got := strings.Join(tokens, ""); got != ev.Data.Text {
								t.Errorf("token frames add up to\n%q\ngeneration.complete says\n%q", got, ev.Data.Text)
							}
							if !withSecret && ev.Data.Text != answer {
								t.Errorf("generation.complete = %q, want %q", ev.Data.Text, answer)
							}
						}
					}
					if gens != 1 {
						t.Fatalf("%d generations in the stream, want 1:\n%s", gens, raw.String())
					}
					if withSecret && (strings.Contains(raw.String(), secret[:10]) || !strings.Contains(raw.String(), "[REDACTED:")) {
						t.Fatalf("the stream does not show the secret redacted:\n%s", raw.String())
					}
				})
			}
		}
	}
}

// dataLine is the data line of a raw frame.
func dataLine(raw string) string {
	for _, l := range strings.Split(raw, "\n") {
		if strings.HasPrefix(l, "data: ") {
			return l
		}
	}
	return ""
}
