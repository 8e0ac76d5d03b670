package main

import (
	"bufio"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// Issue 13 acceptance 4: an SSE client that never reads does not delay the
// Telegram adapter's edits of the same conversation. The same answer is
// streamed twice into one Telegram chat, first with nobody following the
// conversation through the API, then with a follower whose socket takes
// almost nothing and who never reads; both answers reach Telegram whole,
// edit by edit, and their edit timelines are reported side by side.
func TestSlowStreamDoesNotDelayTelegramEdits(t *testing.T) {
	dir := t.TempDir()
	tg := telegramtest.New(t)
	model := llmfake.New(t)
	cfg := writeConfig(t, dir, model.URL, "", fmt.Sprintf(
		"telegram:\n  token: %q\n  api_url: %s\n  allowed_users: [%d]\n", telegramtest.Token, tg.URL, aliceTG))
	// No policy file, so no roles: the admin scope lets carol see alice's chat.
	token, _ := createScopedToken(t, cfg, "carol", "--scope", "read,admin")
	s := serveConfig(t, cfg)
	alice := telegramtest.User(aliceTG, "alice")
	chat := telegramtest.PrivateChat(aliceTG)

	// About 60 KB of answer in 2,400 chunks: more events than a socket
	// that reads nothing can hold, so the stream's writes block for real.
	answer := func(tag string) llmfake.Reply {
		return llmfake.Reply{Text: strings.Repeat("checkout pods are healthy and the queue drains ", 300) + tag, TokenDelay: 100 * time.Microsecond}
	}
	run := func(tag string) (edits int, took time.Duration) {
		t.Helper()
		before := len(tg.Calls())
		model.Push(answer(tag))
		tg.Push(tg.NewTextUpdate(chat, alice, "how is checkout? "+tag))
		tgMessage(t, tg, aliceTG, "the answer "+tag, s.log, func(m telegramtest.Message) bool {
			return strings.Contains(m.Visible, tag)
		})
		var first, last time.Time
		for _, c := range tg.Calls()[before:] {
			if c.Chat() != aliceTG || (c.Method != "sendMessage" && c.Method != "editMessageText") {
				continue
			}
			if first.IsZero() {
				first = c.Time
			}
			last = c.Time
			if c.Method == "editMessageText" {
				edits++
			}
		}
		return edits, last.Sub(first)
	}

	baseEdits, baseTook := run("END-A")
	status, body := apiCall(t, s, token, "GET", "/api/v1/conversations?prefix=telegram:", "")
	key := between(body, `"key":"`, `"`)
	if status != 200 || key == "" {
		t.Fatalf("GET conversations = %d %s, want the Telegram conversation", status, body)
	}

	// The follower: a 1 KiB receive buffer, and it never reads.
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1024) })
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /api/v1/conversations/%s/events HTTP/1.1\r\nHost: opsgate\r\nAuthorization: Bearer %s\r\n\r\n", url.PathEscape(key), token)

	slowEdits, slowTook := run("END-B")
	t.Logf("Telegram edits of the same answer: without a follower %d edits over %v; with a follower that never reads %d edits over %v",
		baseEdits, baseTook.Round(time.Millisecond), slowEdits, slowTook.Round(time.Millisecond))
	if baseEdits == 0 || slowEdits == 0 {
		t.Fatalf("no edits: %d without, %d with the follower", baseEdits, slowEdits)
	}

	// The follower was really behind: what it reads now, long after the
	// chat got the whole answer, is the stream from its start.
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(conn)
	statusLine, err := br.ReadString('\n')
	if err != nil || !strings.Contains(statusLine, "200") {
		t.Fatalf("the follower's stream: %q, %v", statusLine, err)
	}
	var sawTokens, sawCompleted bool
	for !sawCompleted {
		line, err := br.ReadString('\n')
		if err != nil {
			break // cut off as too far behind: allowed, it reconnects
		}
		sawTokens = sawTokens || strings.HasPrefix(line, "event: token")
		sawCompleted = strings.HasPrefix(line, "event: completed")
	}
	if !sawTokens {
		t.Errorf("the follower got no token events")
	}
}

// between returns the text of s between the first from and the next to.
func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, to)
	return v
}
