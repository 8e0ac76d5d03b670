// Package memorycli is the body of opsgate memory: import, search, list,
// show, promote, reject and export long-term memory from the terminal
// (docs/memory.md). The chat side of memory (/remember, /memory, /forget)
// is memory's own Command; this package is what the person at the
// terminal sees, so everything a document holds is printed sanitised.
// cmd/opsgate parses the flags and opens the memory (docs/design.md §1).
package memorycli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/internal/cli"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/memory/docs"
)

// Help is opsgate memory's help.
const Help = `Usage:
  opsgate memory import DIR
  opsgate memory search QUERY [--explain] [--conversation KEY --person NAME] [--limit N]
  opsgate memory list [--scope SCOPE] [--type TYPE] [--status STATUS]
  opsgate memory show PATH|ID [--scope SCOPE]
  opsgate memory promote ID
  opsgate memory reject ID
  opsgate memory export [--dir DIR]

memory manages long-term memory: the runbooks, lessons and conventions
opsgate puts in front of the model before it plans (docs/memory.md).

import stores every *.md under DIR (recursively) as the document at its
path relative to DIR; YAML front matter may set title, type, tags,
entities, scope, trust and status. Default: an admin_approved workspace
runbook. Importing again changes only what changed. Files are data,
checked before they are read: symlinks, names with control characters,
files over memory.max_doc_bytes (never opened) and binary files are
skipped with the reason. Every file read is safety-scanned; one with a
finding (a secret, an injection) is refused, and import then exits 1.

search ranks documents as memory_prepare does and prints them; --explain
shows each part of each score (text, entity, trust, type, recency), to see
why a document was or was not used. Without --conversation it searches
workspace memory; with --conversation KEY and --person NAME it sees what
that conversation sees (workspace, its channel, the person, itself).

list prints documents (SCOPE: workspace, channel:KEY, user:PERSON,
conversation:KEY); show prints one with its history. promote makes a
document workspace memory, admin_approved; reject archives it. export
writes every document as JSON Lines to stdout, or with --dir as Markdown
files with front matter that import reads back.

Flags may come before or after the arguments.
`

// args is how many arguments each subcommand takes; search takes one or
// more (the words of the query).
var args = map[string]int{"import": 1, "show": 1, "promote": 1, "reject": 1, "list": 0, "export": 0}

// Flags are opsgate memory's flags, each for the subcommands its comment
// names.
type Flags struct {
	Explain      bool   // search
	Conversation string // search
	Person       string // search, with Conversation
	Limit        int    // search
	Scope        string // list, show
	Type         string // list
	Status       string // list
	Dir          string // export
}

// Register defines the flags on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.BoolVar(&f.Explain, "explain", false, "search: show each score component")
	fs.StringVar(&f.Conversation, "conversation", "", "search: as this conversation sees memory")
	fs.StringVar(&f.Person, "person", "", "search: the person asking (with --conversation)")
	fs.IntVar(&f.Limit, "limit", 6, "search: how many documents")
	fs.StringVar(&f.Scope, "scope", "", "list, show: the scope")
	fs.StringVar(&f.Type, "type", "", "list: only this type")
	fs.StringVar(&f.Status, "status", "", "list: only this status")
	fs.StringVar(&f.Dir, "dir", "", "export: write Markdown files here instead of JSON Lines to stdout")
}

// Check checks the subcommand and its arguments (rest); the error is a
// usage error naming the command (cli.IO.Usage).
func Check(rest []string) error {
	if len(rest) == 0 {
		return cli.ErrNoSubcommand
	}
	cmd, rest := rest[0], rest[1:]
	n, fixed := args[cmd]
	switch {
	case fixed && len(rest) != n:
		return fmt.Errorf("memory %s: want %d argument(s), got %q", cmd, n, rest)
	case cmd == "search" && len(rest) == 0:
		return errors.New("memory search: want a QUERY")
	case !fixed && cmd != "search":
		return fmt.Errorf("memory: unknown subcommand %q", cmd)
	}
	return nil
}

// Command runs opsgate memory's subcommands over an open memory.
type Command struct {
	cli.IO
	Memory *memory.Memory
	// By is who acts: the person at the terminal.
	By string
}

// Run runs subcommand cmd with its arguments (checked against Args by the
// caller) and returns the exit code.
func (c Command) Run(ctx context.Context, cmd string, rest []string, f Flags) int {
	m := c.Memory
	switch cmd {
	case "import":
		rep, err := m.Import(ctx, rest[0], c.By)
		if err != nil {
			return c.Fail(err)
		}
		fmt.Fprint(c.Stdout, rep.String())
		// Only a refusal fails the import: a skipped file (too large,
		// binary, a symlink) is not a safety finding.
		if len(rep.Refused) > 0 {
			return cli.ExitError
		}
	case "search":
		scopes := []docs.Scope{docs.WorkspaceScope}
		if f.Conversation != "" {
			scopes = memory.Visible(f.Conversation, f.Person)
		}
		res, err := m.Search(ctx, memory.SearchRequest{Text: strings.Join(rest, " "), Scopes: scopes, Limit: f.Limit, IncludeDrafts: true})
		if err != nil {
			return c.Fail(err)
		}
		if f.Explain {
			var b strings.Builder
			if err = memory.WriteExplain(&b, strings.Join(rest, " "), res); err == nil {
				// Titles and paths are the documents' data: neutralised
				// as chat neutralises what it prints.
				_, err = io.WriteString(c.Stdout, terminal.Sanitize(b.String()))
			}
		} else {
			err = c.printScored(res)
		}
		if err != nil {
			return c.Fail(err)
		}
	case "list":
		filter := docs.Filter{Type: docs.Type(f.Type), Statuses: nil}
		if f.Status != "" {
			filter.Statuses = []docs.Status{docs.Status(f.Status)}
		}
		if f.Scope != "" {
			s, err := docs.ParseScope(f.Scope)
			if err != nil {
				c.Fail(fmt.Errorf("--scope: %w", err))
				return cli.ExitUsage
			}
			filter.Scopes = []docs.Scope{s}
		}
		list, err := m.Store().Documents(ctx, filter)
		if err != nil {
			return c.Fail(err)
		}
		c.printDocuments(list)
	case "show":
		return c.showDocument(ctx, rest[0], f.Scope)
	case "promote", "reject":
		act := m.Promote
		if cmd == "reject" {
			act = m.Reject
		}
		d, err := act(ctx, rest[0], c.By)
		if err != nil {
			return c.Fail(err)
		}
		fmt.Fprintf(c.Stdout, "%s: %s is now %s %s %s (version %d)\n", cmd, d.Path, d.Scope, d.Trust, d.Status, d.Version)
	case "export":
		var err error
		if f.Dir != "" {
			err = m.ExportDir(ctx, f.Dir, docs.Filter{})
		} else {
			err = m.Export(ctx, c.Stdout, docs.Filter{})
		}
		if err != nil {
			return c.Fail(err)
		}
	default:
		fmt.Fprintf(c.Stderr, "opsgate memory: unknown subcommand %q\n\n%s", cmd, Help)
		return cli.ExitUsage
	}
	return cli.ExitOK
}

func (c Command) printScored(res []memory.Scored) error {
	if len(res) == 0 {
		fmt.Fprintln(c.Stdout, "no documents matched")
		return nil
	}
	w := tabwriter.NewWriter(c.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SCORE\tPATH\tSCOPE\tTYPE\tTRUST\tTITLE")
	for _, r := range res {
		fmt.Fprintf(w, "%.3f\t%s\t%s\t%s\t%s\t%s\n", r.Score, cell(r.Doc.Path), cell(r.Doc.Scope.String()), cell(string(r.Doc.Type)), r.Doc.Trust, cell(r.Doc.Title))
	}
	return w.Flush()
}

func (c Command) printDocuments(list []docs.Document) {
	if len(list) == 0 {
		fmt.Fprintln(c.Stdout, "no documents")
		return
	}
	w := tabwriter.NewWriter(c.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tSCOPE\tPATH\tTYPE\tTRUST\tSTATUS\tVERSION\tUPDATED")
	for _, d := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", d.ID, cell(d.Scope.String()), cell(d.Path), cell(string(d.Type)), d.Trust, d.Status, d.Version, d.UpdatedAt.UTC().Format("2006-01-02 15:04"))
	}
	w.Flush()
}

// showDocument prints a document (by path in scope, else by id) and its
// history.
func (c Command) showDocument(ctx context.Context, ref, scope string) int {
	m := c.Memory
	s := docs.WorkspaceScope
	if scope != "" {
		var err error
		if s, err = docs.ParseScope(scope); err != nil {
			c.Fail(fmt.Errorf("--scope: %w", err))
			return cli.ExitUsage
		}
	}
	d, err := m.Store().DocumentAt(ctx, s, ref)
	if errors.Is(err, docs.ErrNotFound) {
		d, err = m.Store().Document(ctx, ref)
	}
	if errors.Is(err, docs.ErrNotFound) {
		return c.Fail(fmt.Errorf("memory: no document %q in %s (and no document has that id)", ref, s))
	}
	if err != nil {
		return c.Fail(err)
	}
	// Everything but the ids is the document's data: neutralised as chat
	// neutralises what it prints (an escape sequence in a runbook must not
	// clear the screen or retitle the terminal).
	fmt.Fprintf(c.Stdout, "id:       %s\npath:     %s\nscope:    %s\ntitle:    %s\ntype:     %s\ntrust:    %s\nstatus:   %s\nversion:  %d\nsha256:   %s\n",
		d.ID, cell(d.Path), cell(d.Scope.String()), cell(d.Title), cell(string(d.Type)), d.Trust, d.Status, d.Version, d.SHA256)
	if len(d.Tags) > 0 {
		fmt.Fprintf(c.Stdout, "tags:     %s\n", cell(strings.Join(d.Tags, ", ")))
	}
	for k, vs := range d.Entities {
		fmt.Fprintf(c.Stdout, "entity:   %s = %s\n", cell(k), cell(strings.Join(vs, ", ")))
	}
	fmt.Fprintf(c.Stdout, "\n%s\n", terminal.Sanitize(strings.TrimRight(d.Content, "\n")))
	hist, err := m.Store().History(ctx, d.ID)
	if err != nil {
		return c.Fail(err)
	}
	fmt.Fprintln(c.Stdout, "\nhistory:")
	for _, v := range hist {
		fmt.Fprintf(c.Stdout, "  v%d  %s  %s  %s  %s\n", v.Doc.Version, v.At.UTC().Format("2006-01-02 15:04"), cell(v.Doc.Author), v.Doc.SHA256[:12], cell(v.Note))
	}
	return cli.ExitOK
}

// cell is a document's field on one line of a table: control characters
// neutralised (terminal.Sanitize, as chat does), line breaks and tabs
// shown as \n and \t so that a name cannot break the table.
func cell(s string) string {
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(terminal.Sanitize(s))
}
