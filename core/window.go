package core

// Window returns the messages to send to the model (DESIGN §4): every system
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

// dropOrphans removes tool results without their call and strips calls
// without a result (an assistant message left with neither text nor calls
// goes too).
func dropOrphans(msgs []Message) []Message {
	called := map[string]bool{}
	answered := map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			called[c.ID] = true
		}
		if m.Role == RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		switch {
		case m.Role == RoleTool && !called[m.ToolCallID]:
			continue
		case len(m.ToolCalls) > 0:
			var calls []ToolCall
			for _, c := range m.ToolCalls {
				if answered[c.ID] {
					calls = append(calls, c)
				}
			}
			if len(calls) != len(m.ToolCalls) {
				if len(calls) == 0 && m.Content == "" {
					continue
				}
				m.ToolCalls = calls
			}
		}
		out = append(out, m)
	}
	return out
}
