package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/opsgate/opsgate/adapters/terminal"
	"log/slog"
	"strings"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/incident"
	"github.com/opsgate/opsgate/core/timeline"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/internal/tokens"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/memory/docs"
)

const incidentHelp = `Usage:
  opsgate incident report KEY [--format md|json]
  opsgate incident postmortem KEY

incident report prints the timeline of conversation KEY (an incident's
incident:<hash>, or any other conversation) from what the store keeps: a
header (start, end, duration, people, changes made and whose approval they
ran on, approvals) and every step in order with its UTC time and actor:
alerts fired and resolved, messages, tool calls (risk, outcome, duration),
approvals asked, voted and decided, previews, stops and errors. --format
json prints the same as JSON, in a stable form.

incident postmortem asks the model for a postmortem draft from the timeline,
prints it and keeps it as a postmortem draft (agent_draft) in the channel
memory of the conversation; an admin promotes it (opsgate memory promote ID,
or the promotion card in chat).
`

func (e *env) incident(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("incident", flag.ContinueOnError)
	format := fs.String("format", "md", "report: md or json")
	rest, code, ok := e.parseArgs(fs, args, incidentHelp, 2)
	if !ok {
		return code
	}
	if len(rest) != 2 || (rest[0] != "report" && rest[0] != "postmortem") {
		fmt.Fprint(e.stderr, incidentHelp)
		return exitUsage
	}
	if *format != "md" && *format != "json" {
		fmt.Fprintf(e.stderr, "opsgate incident: --format: want md or json (got %q)\n\n%s", *format, incidentHelp)
		return exitUsage
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	red, err := newRedactor(cfg)
	if err != nil {
		e.fail(err)
		return exitError
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		e.fail(err)
		return exitError
	}
	defer store.Close()
	t, err := conversationTimeline(ctx, store, rest[1])
	if err != nil {
		e.fail(err)
		return exitError
	}
	t.Redact(red.String)
	if rest[0] == "postmortem" {
		return e.postmortem(ctx, cfg, store, t)
	}
	if *format == "json" {
		b, err := t.JSON()
		if err != nil {
			e.fail(err)
			return exitError
		}
		e.stdout.Write(b)
		return exitOK
	}
	fmt.Fprint(e.stdout, t.Markdown())
	return exitOK
}

// conversationTimeline is the timeline of the stored conversation key; a
// key the store does not hold is an error.
func conversationTimeline(ctx context.Context, store core.Store, key string) (timeline.Timeline, error) {
	src, ok := timelineSource(store)
	if !ok {
		return timeline.Timeline{}, errors.New("this store keeps no timelines")
	}
	cs, err := store.Conversations(ctx, core.ConversationFilter{KeyPrefix: key})
	if err != nil {
		return timeline.Timeline{}, err
	}
	for _, c := range cs {
		if c.Key == key {
			t, err := timeline.Build(ctx, src, key, c.Title)
			if errors.Is(err, timeline.ErrEmpty) {
				err = nil
			}
			return t, err
		}
	}
	return timeline.Timeline{}, fmt.Errorf("no conversation %q (opsgate conversations are listed by GET /api/v1/conversations)", key)
}

func (e *env) postmortem(ctx context.Context, cfg *config.Config, store core.Store, t timeline.Timeline) int {
	ds, ok := store.(docs.Store)
	if !ok {
		e.fail(errors.New("memory: this store keeps no memory documents"))
		return exitError
	}
	if len(t.Steps) == 0 {
		e.fail(fmt.Errorf("no postmortem for %s: nothing is recorded in it", t.ConvKey))
		return exitError
	}
	model, err := newModel(cfg)
	if err != nil {
		e.fail(err)
		return exitError
	}
	red, err := newRedactor(cfg)
	if err != nil {
		e.fail(err)
		return exitError
	}
	m := memory.New(ds, memory.Options{Secrets: red.String, Tokens: tokens.Count, MaxDocBytes: cfg.Memory.MaxDocBytes, MinScore: minScore(cfg)})
	d, err := timeline.Postmortem(ctx, model, t)
	if err != nil {
		e.fail(err)
		return exitError
	}
	fmt.Fprintf(e.stdout, "# %s (draft)\n\n%s\n\n", d.Title, red.String(d.Content))
	path, id, err := (postmortemSaver{m}).SavePostmortem(ctx, t.ConvKey, terminal.LocalUser(e.getenv), t, d)
	if err != nil {
		e.fail(fmt.Errorf("the draft was not saved to memory: %w", err))
		return exitError
	}
	fmt.Fprintln(e.stdout, timeline.SavedNote(path, id))
	return exitOK
}

// postmortemSaver keeps postmortem drafts in long-term memory
// (timeline.Saver).
type postmortemSaver struct{ m *memory.Memory }

func (s postmortemSaver) SavePostmortem(ctx context.Context, convKey string, by core.Actor, t timeline.Timeline, d timeline.Draft) (string, string, error) {
	doc, err := s.m.SavePostmortem(ctx, memory.Postmortem{ConvKey: convKey, Author: by.ID, Title: d.Title, Content: d.Content, Tags: t.Tags()})
	if err != nil {
		return "", "", err
	}
	return doc.Path, doc.ID, nil
}

// chatCommands are the chat commands that are not runs: memory's
// (/remember, /memory, /forget) when memory is on, and the timeline's
// (/timeline, /postmortem) when the store keeps timelines.
func chatCommands(store core.Store, model core.Model, mem *memory.Memory, log *slog.Logger) core.Commands {
	var cs commandChain
	if mem != nil {
		cs = append(cs, mem)
	}
	if src, ok := timelineSource(store); ok {
		tc := &timeline.Commands{Source: src, Model: model, Logger: log.With("component", "timeline")}
		if mem != nil {
			tc.Saver = postmortemSaver{mem}
		}
		cs = append(cs, tc)
	}
	if len(cs) == 0 {
		return nil
	}
	return cs
}

// commandChain asks each of its Commands in turn; the first that knows
// the command answers it.
type commandChain []core.Commands

func (cc commandChain) Command(ctx context.Context, c core.CommandCall) (string, bool) {
	if !strings.HasPrefix(strings.TrimSpace(c.Text), "/") {
		return "", false
	}
	for _, x := range cc {
		if reply, ok := x.Command(ctx, c); ok {
			return reply, true
		}
	}
	return "", false
}

// incidentTimelines is a store as the source of timelines: its records,
// and for an incident conversation the alerts its intake keeps
// (timeline.Alerts), which outlive the events.
type incidentTimelines struct {
	timeline.Source
	incidents incident.Store          // nil: the store keeps no incidents
	approvals timeline.ApprovalReader // nil: the store keeps no approvals
}

// Approval is the store's (timeline.ApprovalReader).
func (s incidentTimelines) Approval(ctx context.Context, id string) (core.Approval, error) {
	if s.approvals == nil {
		return core.Approval{}, core.ErrNotFound
	}
	return s.approvals.Approval(ctx, id)
}

// timelineSource returns store as a timeline source, or false.
func timelineSource(store any) (timeline.Source, bool) {
	src, ok := store.(timeline.Source)
	if !ok {
		return nil, false
	}
	is, _ := store.(incident.Store)
	ar, _ := store.(timeline.ApprovalReader)
	return incidentTimelines{Source: src, incidents: is, approvals: ar}, true
}

// AlertChanges are the fired and resolved alerts of the incident whose
// conversation (or chat thread) is key; none for other conversations.
func (s incidentTimelines) AlertChanges(ctx context.Context, key string) ([]timeline.AlertChange, error) {
	if s.incidents == nil {
		return nil, nil
	}
	r, ok, err := s.incidents.Incident(ctx, key)
	if err == nil && !ok {
		r, ok, err = s.incidents.IncidentByThread(ctx, key)
	}
	if err != nil || !ok {
		return nil, err
	}
	known := map[string]incident.Known{}
	for _, k := range r.Alerts {
		known[k.Fingerprint] = k
	}
	out := make([]timeline.AlertChange, 0, len(r.History))
	for _, c := range r.History {
		k := known[c.Fingerprint]
		out = append(out, timeline.AlertChange{Resolved: c.Kind == incident.ChangeResolved, Name: cmp.Or(c.Alert, k.Name()),
			Severity: k.Severity(), Summary: cmp.Or(k.Annotations["summary"], k.Annotations["description"]),
			Fingerprint: c.Fingerprint, Receiver: r.Receiver, At: c.At, Received: c.Received})
	}
	return out, nil
}
