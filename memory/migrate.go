package memory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Migrate is opsgate migrate: it opens the store raw names, which applies
// pending migrations and checks the schema, confirms that nothing is left
// to apply, and writes to w the schema version and the migrations applied.
func Migrate(ctx context.Context, w io.Writer, raw string) error {
	loc, _ := Parse(raw)
	created := false
	if loc.Kind == SQLite {
		_, statErr := os.Stat(loc.Target)
		created = errors.Is(statErr, fs.ErrNotExist)
	}
	// Open applies pending migrations and checks the schema; Migrate then
	// confirms nothing is left.
	store, err := Open(ctx, raw)
	if err != nil {
		return err
	}
	defer store.Close()
	m, ok := store.(interface {
		Migrate(ctx context.Context) (applied []string, err error)
		SchemaVersion(ctx context.Context) (int, error)
	})
	if !ok {
		fmt.Fprintf(w, "store: %s (no migrations)\n", loc)
		return nil
	}
	var applied []string
	if o, ok := store.(interface{ AppliedOnOpen() []string }); ok {
		applied = o.AppliedOnOpen()
	}
	more, err := m.Migrate(ctx)
	if err != nil {
		return err
	}
	applied = append(applied, more...)
	v, err := m.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	state := "up to date"
	if len(applied) > 0 {
		state = fmt.Sprintf("%d migrations applied", len(applied))
	}
	if created {
		state = "created, " + state
	}
	fmt.Fprintf(w, "store: %s (%s), schema version %d\n", loc, state, v)
	for _, name := range applied {
		fmt.Fprintf(w, "  applied %s\n", name)
	}
	return nil
}
