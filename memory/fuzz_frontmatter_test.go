package memory

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/opsgate/opsgate/memory/docs"
)

// FuzzFrontMatter reads arbitrary Markdown files as memory import does.
// A file it accepts is a valid document (known type, trust and status, a
// scope that parses, a title), and it survives export: written out as
// ExportDir writes it and read again, it is the same document.
func FuzzFrontMatter(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/corpus/*/*.md")
	for _, p := range seeds[:min(len(seeds), 8)] {
		if b, err := os.ReadFile(p); err == nil && len(b) < 4096 {
			f.Add("runbooks/"+filepath.Base(p), b)
		}
	}
	for _, s := range []string{
		"---\ntitle: Restart web\ntype: runbook\ntags: [web, restart, web, ' ']\nentities:\n  Service: [Web, web]\n  namespace: prod\nscope: channel:slack:T1:C1\ntrust: admin_approved\nstatus: draft\n---\n\n# Steps\n",
		"\ufeff---\r\ntitle: \"quoted: colon\"\r\n...\r\nbody",
		"---\ntrust: agent_draft\n---\n# Heading title\n```\n# not a heading\n```\n",
		"---\ntitle: a\ntittle: typo\n---\n",
		"---\nentities: {a: {b: c}}\n---\n",
		"no front matter\n# Title",
		"---\nunclosed: true\n",
	} {
		f.Add("notes/x.md", []byte(s))
	}
	f.Fuzz(func(t *testing.T, rel string, file []byte) {
		d, err := parseDocument(rel, file)
		if err != nil {
			return
		}
		if !d.Type.Valid() || !d.Trust.Valid() || d.Status == "" {
			t.Fatalf("accepted an invalid document: %+v", d)
		}
		if _, err := docs.ParseScope(d.Scope.String()); err != nil {
			t.Fatalf("accepted scope %v: %v", d.Scope, err)
		}
		out, err := renderDocument(d)
		if err != nil {
			t.Fatalf("exporting %+v: %v", d, err)
		}
		again, err := parseDocument(rel, out)
		if err != nil {
			t.Fatalf("the exported file does not read back: %v\n%s", err, out)
		}
		if diff := cmp.Diff(d, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("export and import changed the document (-first +second):\n%s\nexported:\n%s", diff, out)
		}
	})
}
