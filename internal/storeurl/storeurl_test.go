package storeurl_test

import (
	"strings"
	"testing"

	"github.com/opsgate/opsgate/internal/storeurl"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		raw     string
		want    storeurl.Location
		wantErr string
	}{
		{raw: "./data/my.db", want: storeurl.Location{Kind: storeurl.SQLite, Target: "./data/my.db"}},
		{raw: "sqlite:///var/lib/opsgate.db", want: storeurl.Location{Kind: storeurl.SQLite, Target: "/var/lib/opsgate.db"}},
		{raw: "postgresql://u:p@db:5432/og", want: storeurl.Location{Kind: storeurl.Postgres, Target: "postgresql://u:p@db:5432/og"}},
		{raw: "  ", wantErr: "must not be empty"},
		{raw: "sqlite://", wantErr: "needs a file path"},
		{raw: "postgres:///og", wantErr: "needs a host"},
		{raw: "mysql://db/og", wantErr: `unsupported scheme "mysql"`},
	} {
		got, err := storeurl.Parse(tt.raw)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%q) = %+v, %v; want an error with %q", tt.raw, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.raw, got, err, tt.want)
		}
	}
	if w := (storeurl.Location{Kind: storeurl.Postgres, Target: "postgres://u:secret@db/og"}).Where(); strings.Contains(w, "secret") {
		t.Errorf("Where() = %q shows the password", w)
	}
}
