package telegramtest_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
)

func send(t *testing.T, s *telegramtest.Server, method string, chat int64) int {
	t.Helper()
	res, err := http.PostForm(s.URL+"/bot"+telegramtest.Token+"/"+method, url.Values{
		"chat_id": {strconv.FormatInt(chat, 10)}, "text": {"hi"}, "action": {"typing"},
	})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestBudget checks the flood limits: one call per chat and three in all
// per second, chat-less calls free, refused calls not counted, and a call
// before retry_after has passed reported as an early retry.
func TestBudget(t *testing.T) {
	s := telegramtest.New(t)
	if got := send(t, s, "sendMessage", 1); got != 200 {
		t.Fatalf("without a budget: %d", got)
	}
	s.SetBudget(telegramtest.Budget{Global: 3, PerChat: 1})
	steps := []struct {
		method string
		chat   int64
		code   int
		limit  string
	}{
		{"sendMessage", 1, 200, ""},
		{"sendChatAction", 1, 429, telegramtest.LimitChat}, // every call naming a chat counts
		{"sendMessage", 2, 200, ""},
		{"getMe", 0, 200, ""}, // no chat: free
		{"sendMessage", 3, 200, ""},
		{"sendMessage", 4, 429, telegramtest.LimitGlobal},
		{"sendMessage", 4, 429, telegramtest.LimitGlobal}, // refused calls do not count, but it is early
	}
	for i, st := range steps {
		if got := send(t, s, st.method, st.chat); got != st.code {
			t.Fatalf("step %d (%s to %d): %d, want %d", i, st.method, st.chat, got, st.code)
		}
	}
	calls := s.Calls()[1:]
	for i, st := range steps {
		c := calls[i]
		if c.Limit != st.limit || (st.code == 429) != (c.RetryAfter == 1) {
			t.Errorf("step %d: limit %q retry_after %d, want %q", i, c.Limit, c.RetryAfter, st.limit)
		}
	}
	if early := s.EarlyRetries(); len(early) != 1 || early[0].Chat() != 4 {
		t.Errorf("early retries %+v, want the second call to chat 4", early)
	}
	time.Sleep(time.Second)
	if got := send(t, s, "sendMessage", 4); got != 200 {
		t.Errorf("after retry_after: %d", got)
	}
	if early := s.EarlyRetries(); len(early) != 1 {
		t.Errorf("a call after retry_after counted as early: %+v", early)
	}
	s.SetBudget(telegramtest.Budget{})
	for range 5 {
		if got := send(t, s, "sendMessage", 1); got != 200 {
			t.Fatalf("budget off: %d", got)
		}
	}
}
