package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/internal/tokens"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/memory/docs"
)

const memoryHelp = `Usage:
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

func (e *env) memory(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("memory", flag.ContinueOnError)
	explain := fs.Bool("explain", false, "search: show each score component")
	conv := fs.String("conversation", "", "search: as this conversation sees memory")
	person := fs.String("person", "", "search: the person asking (with --conversation)")
	limit := fs.Int("limit", 6, "search: how many documents")
	scope := fs.String("scope", "", "list, show: the scope")
	typ := fs.String("type", "", "list: only this type")
	status := fs.String("status", "", "list: only this status")
	dir := fs.String("dir", "", "export: write Markdown files here instead of JSON Lines to stdout")
	rest, code, ok := e.parseArgs(fs, args, memoryHelp, 64)
	if !ok {
		return code
	}
	if len(rest) == 0 {
		fmt.Fprint(e.stderr, memoryHelp)
		return exitUsage
	}
	cmd, rest := rest[0], rest[1:]
	want := map[string]int{"import": 1, "show": 1, "promote": 1, "reject": 1, "list": 0, "export": 0}
	if n, fixed := want[cmd]; fixed && len(rest) != n {
		fmt.Fprintf(e.stderr, "opsgate memory %s: want %d argument(s), got %q\n\n%s", cmd, n, rest, memoryHelp)
		return exitUsage
	}
	if cmd == "search" && len(rest) == 0 {
		fmt.Fprintf(e.stderr, "opsgate memory search: want a QUERY\n\n%s", memoryHelp)
		return exitUsage
	}
	if _, fixed := want[cmd]; !fixed && cmd != "search" {
		fmt.Fprintf(e.stderr, "opsgate memory: unknown subcommand %q\n\n%s", cmd, memoryHelp)
		return exitUsage
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	m, closeStore, err := e.openMemory(ctx, cfg)
	if err != nil {
		e.fail(err)
		return exitError
	}
	defer closeStore()
	by := terminal.LocalUser(e.getenv).ID
	switch cmd {
	case "import":
		rep, err := m.Import(ctx, rest[0], by)
		if err != nil {
			e.fail(err)
			return exitError
		}
		fmt.Fprint(e.stdout, rep.String())
		// Only a refusal fails the import: a skipped file (too large,
		// binary, a symlink) is not a safety finding.
		if len(rep.Refused) > 0 {
			return exitError
		}
	case "search":
		scopes := []docs.Scope{docs.WorkspaceScope}
		if *conv != "" {
			scopes = memory.Visible(*conv, *person)
		}
		res, err := m.Search(ctx, memory.SearchRequest{Text: strings.Join(rest, " "), Scopes: scopes, Limit: *limit, IncludeDrafts: true})
		if err != nil {
			e.fail(err)
			return exitError
		}
		if *explain {
			var b strings.Builder
			if err = memory.WriteExplain(&b, strings.Join(rest, " "), res); err == nil {
				// Titles and paths are the documents' data: neutralised
				// as chat neutralises what it prints.
				_, err = io.WriteString(e.stdout, terminal.Sanitize(b.String()))
			}
		} else {
			err = e.printScored(res)
		}
		if err != nil {
			e.fail(err)
			return exitError
		}
	case "list":
		f := docs.Filter{Type: docs.Type(*typ), Statuses: nil}
		if *status != "" {
			f.Statuses = []docs.Status{docs.Status(*status)}
		}
		if *scope != "" {
			s, err := docs.ParseScope(*scope)
			if err != nil {
				e.fail(fmt.Errorf("--scope: %w", err))
				return exitUsage
			}
			f.Scopes = []docs.Scope{s}
		}
		list, err := m.Store().Documents(ctx, f)
		if err != nil {
			e.fail(err)
			return exitError
		}
		e.printDocuments(list)
	case "show":
		return e.showDocument(ctx, m, rest[0], *scope)
	case "promote", "reject":
		act := m.Promote
		if cmd == "reject" {
			act = m.Reject
		}
		d, err := act(ctx, rest[0], by)
		if err != nil {
			e.fail(err)
			return exitError
		}
		fmt.Fprintf(e.stdout, "%s: %s is now %s %s %s (version %d)\n", cmd, d.Path, d.Scope, d.Trust, d.Status, d.Version)
	case "export":
		if *dir != "" {
			err = m.ExportDir(ctx, *dir, docs.Filter{})
		} else {
			err = m.Export(ctx, e.stdout, docs.Filter{})
		}
		if err != nil {
			e.fail(err)
			return exitError
		}
	}
	return exitOK
}

// openMemory opens the store of store.url (migrated as serve would) and
// the memory over it, scanning writes with the configured detectors.
func (e *env) openMemory(ctx context.Context, cfg *config.Config) (*memory.Memory, func(), error) {
	red, err := newRedactor(cfg)
	if err != nil {
		return nil, nil, err
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	ds, ok := store.(docs.Store)
	if !ok {
		store.Close()
		return nil, nil, errors.New("memory: this store keeps no memory documents")
	}
	m := memory.New(ds, memory.Options{Secrets: red.String, Tokens: tokens.Count, MaxDocBytes: cfg.Memory.MaxDocBytes, MinScore: minScore(cfg)})
	return m, func() { store.Close() }, nil
}

func (e *env) printScored(res []memory.Scored) error {
	if len(res) == 0 {
		fmt.Fprintln(e.stdout, "no documents matched")
		return nil
	}
	w := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SCORE\tPATH\tSCOPE\tTYPE\tTRUST\tTITLE")
	for _, r := range res {
		fmt.Fprintf(w, "%.3f\t%s\t%s\t%s\t%s\t%s\n", r.Score, cell(r.Doc.Path), cell(r.Doc.Scope.String()), cell(string(r.Doc.Type)), r.Doc.Trust, cell(r.Doc.Title))
	}
	return w.Flush()
}

func (e *env) printDocuments(list []docs.Document) {
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "no documents")
		return
	}
	w := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tSCOPE\tPATH\tTYPE\tTRUST\tSTATUS\tVERSION\tUPDATED")
	for _, d := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", d.ID, cell(d.Scope.String()), cell(d.Path), cell(string(d.Type)), d.Trust, d.Status, d.Version, d.UpdatedAt.UTC().Format("2006-01-02 15:04"))
	}
	w.Flush()
}

// showDocument prints a document (by path in scope, else by id) and its
// history.
func (e *env) showDocument(ctx context.Context, m *memory.Memory, ref, scope string) int {
	s := docs.WorkspaceScope
	if scope != "" {
		var err error
		if s, err = docs.ParseScope(scope); err != nil {
			e.fail(fmt.Errorf("--scope: %w", err))
			return exitUsage
		}
	}
	d, err := m.Store().DocumentAt(ctx, s, ref)
	if errors.Is(err, docs.ErrNotFound) {
		d, err = m.Store().Document(ctx, ref)
	}
	if errors.Is(err, docs.ErrNotFound) {
		e.fail(fmt.Errorf("memory: no document %q in %s (and no document has that id)", ref, s))
		return exitError
	}
	if err != nil {
		e.fail(err)
		return exitError
	}
	// Everything but the ids is the document's data: neutralised as chat
	// neutralises what it prints (an escape sequence in a runbook must not
	// clear the screen or retitle the terminal).
	fmt.Fprintf(e.stdout, "id:       %s\npath:     %s\nscope:    %s\ntitle:    %s\ntype:     %s\ntrust:    %s\nstatus:   %s\nversion:  %d\nsha256:   %s\n",
		d.ID, cell(d.Path), cell(d.Scope.String()), cell(d.Title), cell(string(d.Type)), d.Trust, d.Status, d.Version, d.SHA256)
	if len(d.Tags) > 0 {
		fmt.Fprintf(e.stdout, "tags:     %s\n", cell(strings.Join(d.Tags, ", ")))
	}
	for k, vs := range d.Entities {
		fmt.Fprintf(e.stdout, "entity:   %s = %s\n", cell(k), cell(strings.Join(vs, ", ")))
	}
	fmt.Fprintf(e.stdout, "\n%s\n", terminal.Sanitize(strings.TrimRight(d.Content, "\n")))
	hist, err := m.Store().History(ctx, d.ID)
	if err != nil {
		e.fail(err)
		return exitError
	}
	fmt.Fprintln(e.stdout, "\nhistory:")
	for _, v := range hist {
		fmt.Fprintf(e.stdout, "  v%d  %s  %s  %s  %s\n", v.Doc.Version, v.At.UTC().Format("2006-01-02 15:04"), cell(v.Doc.Author), v.Doc.SHA256[:12], cell(v.Note))
	}
	return exitOK
}

// cell is a document's field on one line of a table: control characters
// neutralised (terminal.Sanitize, as chat does), line breaks and tabs
// shown as \n and \t so that a name cannot break the table.
func cell(s string) string {
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(terminal.Sanitize(s))
}
