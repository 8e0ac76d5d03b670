package terminal

import (
	"strings"

	"github.com/opsgate/opsgate/core"
)

// preview prints what an approval's call would change (docs/design.md
// §18), the whole diff: a terminal has the room a chat card has not. A
// preview still being worked out prints nothing; it follows when it
// arrives.
func (a *Adapter) preview(w *errWriter, ap core.Approval) {
	p := ap.Preview
	if p == nil || p.Status == core.PreviewPending {
		return
	}
	if p.Changed != "" {
		a.line(w, a.paint(yellow+bold, "    ⚠ "+Sanitize(oneLine(p.Changed, 300))))
	}
	if p.Status == core.PreviewNone {
		a.line(w, a.paint(dim, "    no preview: "+Sanitize(oneLine(p.Why, 300))))
		return
	}
	head := "    what changes (" + Sanitize(ap.Tool) + ")"
	if p.Summary != "" {
		head += ": " + Sanitize(oneLine(p.Summary, 300))
	}
	a.line(w, head)
	for _, text := range []string{p.Why, p.Diff} {
		if text == "" {
			continue
		}
		for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			color := ""
			switch {
			case strings.HasPrefix(l, "+"):
				color = green
			case strings.HasPrefix(l, "-"):
				color = red
			}
			a.line(w, a.paint(color, "      "+Sanitize(l)))
		}
	}
}

// isPending reports whether the approval id was asked and not answered.
func (a *Adapter) isPending(id string) bool {
	for _, p := range a.pending {
		if p.ID == id {
			return true
		}
	}
	return false
}
