package terminal

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// command is a terminal command. The table is both the dispatch and /help,
// so the help cannot list what does not exist.
type command struct {
	name, help string
	run        func(a *Adapter, ctx context.Context) (quit bool)
}

var commands []command

func init() { // in init: /help's run refers to the table itself
	commands = []command{
		{"new", "start a fresh conversation (what runs in this one is stopped)", (*Adapter).newConversation},
		{"status", "what is running, what is queued, what waits for approval", (*Adapter).status},
		{"stop", "stop the current run and cancel its approvals (so does Ctrl-C)", (*Adapter).stop},
		{"help", "list the commands", (*Adapter).help},
		{"quit", "stop the current run and leave (also /exit)", (*Adapter).quitCommand},
	}
}

// EngineCommand reports whether /name is answered by the engine rather
// than by the adapter: the memory and timeline commands, the same on every
// platform (docs/design.md §14, §19). They are sent like a message.
func EngineCommand(name string) bool {
	switch strings.ToLower(name) {
	case "remember", "memory", "forget", "timeline", "postmortem":
		return true
	}
	return false
}

// parseCommand reports whether text is a command: a first word of "/" and
// a letter, then letters, digits, '-' or '_' ("/etc/hosts is full" is a
// message). name is lower-cased.
func parseCommand(text string) (name, args string, ok bool) {
	word := text
	if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
		word, args = text[:i], strings.TrimSpace(text[i:])
	}
	if len(word) < 2 || word[0] != '/' {
		return "", "", false
	}
	for i := 1; i < len(word); i++ {
		switch c := word[i]; {
		case 'a' <= c|0x20 && c|0x20 <= 'z':
		case i > 1 && ('0' <= c && c <= '9' || c == '-' || c == '_'):
		default:
			return "", "", false
		}
	}
	return strings.ToLower(word[1:]), args, true
}

// command runs the command name; unknown ones are refused here, so that a
// mistyped command never reaches the model as a message.
func (a *Adapter) command(ctx context.Context, name, args string) (quit bool, err error) {
	if name == "exit" {
		name = "quit"
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		if args != "" {
			a.println(a.paint(red, "/"+name+" takes no arguments"))
			a.prompt()
			return false, nil
		}
		return c.run(a, ctx), nil
	}
	a.println(a.paint(red, "unknown command /"+Sanitize(name)+", /help lists them"))
	a.prompt()
	return false, nil
}

func (a *Adapter) help(context.Context) bool {
	var b strings.Builder
	b.WriteString("commands:")
	for _, c := range commands {
		fmt.Fprintf(&b, "\n  /%-7s %s", c.name, c.help)
	}
	b.WriteString("\n  /remember TEXT  keep TEXT in this channel's memory\n  /memory QUERY   search memory\n  /forget PATH    archive a memory document you wrote" +
		"\n  /timeline       what happened in this conversation, with UTC times\n  /postmortem     a postmortem draft of it, kept in memory")
	b.WriteString("\nWhen opsgate asks about a tool call, y or yes approves it; anything else denies it\n(words other than n or no are passed to the model as the reason).")
	a.println(b.String())
	a.prompt()
	return false
}

func (a *Adapter) stop(ctx context.Context) bool {
	if !a.engine.Stop(ctx, a.ConvKey()) {
		a.println(a.paint(dim, "nothing to stop"))
	}
	a.prompt()
	return false
}

func (a *Adapter) quitCommand(ctx context.Context) bool {
	if a.engine.Stop(ctx, a.ConvKey()) {
		_ = a.engine.Wait(ctx)
	}
	return true
}

// newConversation switches to a fresh conversation. What runs in the old
// one is stopped first, so that it does not keep printing into the new
// one, and its approvals are forgotten: Stop cancels them.
func (a *Adapter) newConversation(ctx context.Context) bool {
	old := a.ConvKey()
	stopped := a.engine.Stop(ctx, old)
	key := old[:strings.LastIndexByte(old, ':')+1] + NewConvID(time.Now())
	a.mu.Lock()
	a.conv = key
	a.pending, a.batch, a.asked = nil, 0, ""
	a.mu.Unlock()
	msg := "🆕 new conversation " + ConvID(key)
	if stopped {
		msg += " (what ran in the previous one was stopped)"
	}
	a.println(msg)
	a.prompt()
	return false
}

// status shows what the engine knows about the conversation.
func (a *Adapter) status(ctx context.Context) bool {
	key := a.ConvKey()
	st, err := a.engine.Status(ctx, key)
	if err != nil {
		a.log.Error("status", "conv", key, "err", err)
		a.println(a.paint(red, "error: could not read the status: "+Sanitize(err.Error())))
		a.prompt()
		return false
	}
	lines := []string{"conversation " + Sanitize(ConvID(key))}
	if r := st.ActiveRun; r != nil {
		lines = append(lines, fmt.Sprintf("▶ a run is active since %s (%d model call(s) so far)", r.StartedAt.Local().Format("15:04:05"), r.Iterations))
	} else {
		lines = append(lines, "nothing is running")
	}
	if st.Queued > 0 {
		lines = append(lines, fmt.Sprintf("%d message(s) queued", st.Queued))
	}
	for _, ap := range st.PendingApprovals {
		lines = append(lines, fmt.Sprintf("⏸ %s%s waits for approval, expires in %s",
			Sanitize(ap.Tool), argSummary(ap.Arguments, promptArgs), short(time.Until(ap.ExpiresAt))))
	}
	a.println(strings.Join(lines, "\n"))
	a.prompt()
	return false
}
