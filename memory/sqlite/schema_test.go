package sqlite_test

import (
	"errors"
	"github.com/opsgate/opsgate/core"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/memory/sqlite"
)

// TestOpenRefusesAlteredSchema alters a migrated database with SQLite's own
// SQL and checks that Open and CheckSchema name what was changed.
func TestOpenRefusesAlteredSchema(t *testing.T) {
	auditObjects := []string{"table audit", "index audit_conv", "index audit_run", "index audit_approval",
		"trigger audit_no_update", "trigger audit_no_delete", "trigger audit_no_replace"}
	tests := []struct {
		name  string
		alter []string
		want  core.SchemaError
	}{
		{"dropped audit trigger", []string{`DROP TRIGGER audit_no_delete`},
			core.SchemaError{Store: "sqlite", Missing: []string{"trigger audit_no_delete"}, Audit: true}},
		{"dropped audit table", []string{`DROP TABLE audit`},
			core.SchemaError{Store: "sqlite", Missing: auditObjects, Audit: true}},
		{"neutered audit trigger", []string{`DROP TRIGGER audit_no_update`,
			`CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN SELECT 1; END`},
			core.SchemaError{Store: "sqlite", Changed: []string{"trigger audit_no_update"}, Audit: true}},
		{"trigger that swallows audit entries", []string{`CREATE TRIGGER quiet BEFORE INSERT ON audit BEGIN SELECT RAISE(IGNORE); END`},
			core.SchemaError{Store: "sqlite", Unexpected: []string{"trigger quiet on audit"}, Audit: true}},
		{"dropped index elsewhere", []string{`DROP INDEX inbound_dedupe`},
			core.SchemaError{Store: "sqlite", Missing: []string{"index inbound_dedupe"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "opsgate.db")
			s := open(t, path)
			if err := s.CheckSchema(t.Context()); err != nil {
				t.Fatalf("CheckSchema of a freshly migrated store: %v", err)
			}
			db := raw(t, path)
			for _, stmt := range tt.alter {
				if _, err := db.Exec(stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			var se *core.SchemaError
			if err := s.CheckSchema(t.Context()); !errors.As(err, &se) {
				t.Fatalf("CheckSchema after %q: err = %v, want a *SchemaError", tt.alter, err)
			}
			if d := cmp.Diff(&tt.want, se); d != "" {
				t.Errorf("CheckSchema (-want +got):\n%s", d)
			}
			s2, err := sqlite.Open(t.Context(), path)
			if err == nil {
				s2.Close()
				t.Fatal("Open of the altered database: err = nil, want the schema error")
			}
			if err.Error() != se.Error() {
				t.Errorf("Open error = %q, want %q", err, se.Error())
			}
		})
	}
}

func TestSchemaErrorMessage(t *testing.T) {
	e := &core.SchemaError{Store: "sqlite", Missing: []string{"trigger audit_no_delete", "index inbound_dedupe"}, Unexpected: []string{"trigger quiet on audit"}, Audit: true}
	want := "sqlite: schema check: missing trigger audit_no_delete, index inbound_dedupe; unexpected trigger quiet on audit: " +
		"the audit log is not protected (append-only); the database was changed outside opsgate"
	if e.Error() != want {
		t.Errorf("Error() = %q\nwant      %q", e.Error(), want)
	}
}
