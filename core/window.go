package core

// Window returns the messages to send to the model (docs/design.md §4): every system
// message, the first user message (the intent anchor), and the newest keep
// messages — extended backwards so a kept tool result keeps the assistant
// message that asked for it. Then tool results whose call is not in the
// window and tool calls without a result are dropped, so the provider never
// sees an orphan. Because of that extension the newest message always survives. msgs is not
// modified.
func Window(msgs []Message, keep int) []Message {
	if len(msgs) == 0 {
		return nil
	}
	start := max(len(msgs)-keep, 0)
	for start > 0 && msgs[start].Role == RoleTool {
		start--
	}
	firstUser := -1
	for i, m := range msgs {
		if m.Role == RoleUser {
			firstUser = i
			break
		}
	}
	var kept []Message
	for i, m := range msgs {
		if i >= start || m.Role == RoleSystem || i == firstUser {
			kept = append(kept, m)
		}
	}
	return dropOrphans(kept)
}

// dropOrphans removes tool results without their call, strips calls
// without a result (an assistant message left with neither text nor calls
// goes too), and moves every result right behind the message that asked for
// it, as providers require, even if the stored transcript interleaved them
// (a decision that raced a newer message).
func dropOrphans(msgs []Message) []Message {
	// Each result belongs to the nearest earlier assistant message with that
	// call id (some servers reuse ids across turns), answered once.
	answers := map[int]map[string]Message{}
	for i, m := range msgs {
		if m.Role != RoleTool {
			continue
		}
	search:
		for j := i - 1; j >= 0; j-- {
			for _, c := range msgs[j].ToolCalls {
				if c.ID != m.ToolCallID {
					continue
				}
				if answers[j] == nil {
					answers[j] = map[string]Message{}
				}
				if _, done := answers[j][c.ID]; !done {
					answers[j][c.ID] = m
				}
				break search
			}
		}
	}
	out := make([]Message, 0, len(msgs))
	for i, m := range msgs {
		if m.Role == RoleTool {
			continue // placed behind its call below
		}
		if len(m.ToolCalls) == 0 {
			out = append(out, m)
			continue
		}
		var calls []ToolCall
		var results []Message
		for _, c := range m.ToolCalls {
			if r, ok := answers[i][c.ID]; ok {
				calls = append(calls, c)
				results = append(results, r)
				delete(answers[i], c.ID)
			}
		}
		if len(calls) == 0 && m.Content == "" {
			continue
		}
		m.ToolCalls = calls
		out = append(out, m)
		out = append(out, results...)
	}
	return out
}
