package timeline

import (
	"context"
	"fmt"
	"io"

	"github.com/opsgate/opsgate/core"
)

// Help is opsgate incident's help.
const Help = `Usage:
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

// Report writes t for opsgate incident report: Markdown ("md") or JSON
// ("json").
func Report(w io.Writer, t Timeline, format string) error {
	if format != "json" {
		_, err := io.WriteString(w, t.Markdown())
		return err
	}
	b, err := t.JSON()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// WritePostmortem is opsgate incident postmortem: it asks the model for a
// draft of t, writes it to w with redact applied, and keeps it with saver
// as by's. A timeline with nothing recorded gets no draft (and no model is
// made).
func WritePostmortem(ctx context.Context, w io.Writer, newModel func() (core.Model, error), saver Saver, by core.Actor, t Timeline, redact func(string) string) error {
	if len(t.Steps) == 0 {
		return fmt.Errorf("no postmortem for %s: nothing is recorded in it", t.ConvKey)
	}
	model, err := newModel()
	if err != nil {
		return err
	}
	d, err := Postmortem(ctx, model, t)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# %s (draft)\n\n%s\n\n", d.Title, redact(d.Content))
	path, id, err := saver.SavePostmortem(ctx, t.ConvKey, by, t, d)
	if err != nil {
		return fmt.Errorf("the draft was not saved to memory: %w", err)
	}
	_, err = fmt.Fprintln(w, SavedNote(path, id))
	return err
}
