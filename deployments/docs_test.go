package deployments_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The documentation checks of issue 22 ("one house plan"): the README stays
// a short guide whose links resolve, the reference lives under docs/, and
// every design citation in the repository names a section docs/design.md
// has. They walk the repository from its root, as the manifest test does
// from deployments/.

const repoRoot = ".."

// readmeMaxLines is the README's bound: what opsgate is, set-up, a first
// run, the first chat and links; the reference belongs in docs/.
const readmeMaxLines = 250

// docsPages are the reference pages the README must link.
var docsPages = []string{
	"docs/configuration.md", "docs/platforms.md", "docs/policy.md",
	"docs/memory.md", "docs/http-api.md", "docs/operations.md",
	"docs/performance.md", "docs/design.md",
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// localLinks returns the relative link targets of a Markdown file, without
// their #fragment: what must exist in the repository.
func localLinks(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
		target := m[1]
		if strings.HasPrefix(target, "#") || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		target, _, _ = strings.Cut(target, "#")
		out = append(out, target)
	}
	return out
}

// checkLinks fails for a relative link of the Markdown file path (relative
// to the repository root) whose target does not exist, and returns the
// targets as paths from the root.
func checkLinks(t *testing.T, path string) []string {
	t.Helper()
	var linked []string
	for _, target := range localLinks(t, filepath.Join(repoRoot, path)) {
		rel := filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(path), target)))
		if _, err := os.Stat(filepath.Join(repoRoot, rel)); err != nil {
			t.Errorf("%s links %s, which does not exist", path, target)
		}
		linked = append(linked, rel)
	}
	return linked
}

// Issue 22: the README is at most 250 lines, keeps `make test` (CI and a
// hook look for it) and the console screenshot, and links every reference
// page, each of which exists; every relative link of the README and of
// the docs/ pages resolves.
func TestReadmeIsShortAndLinksTheDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := len(strings.Split(strings.TrimSuffix(readme, "\n"), "\n")); n > readmeMaxLines {
		t.Errorf("README.md has %d lines; at most %d (move reference text to a docs/ page)", n, readmeMaxLines)
	}
	for _, want := range []string{"make test", "docs/console.png"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md does not mention %q", want)
		}
	}
	linked := checkLinks(t, "README.md")
	for _, page := range docsPages {
		if !slices.Contains(linked, page) {
			t.Errorf("README.md does not link %s", page)
		}
	}
	pages, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if len(pages) < len(docsPages) {
		t.Fatalf("docs/: %d pages", len(pages))
	}
	for _, p := range pages {
		checkLinks(t, filepath.ToSlash(filepath.Join("docs", filepath.Base(p))))
	}
}

// designSections returns the section numbers docs/design.md has: its
// "## N. Title" headings.
func designSections(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	secs := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^## (\d+)\. `).FindAllStringSubmatch(string(b), -1) {
		secs[m[1]] = true
	}
	if len(secs) == 0 {
		t.Fatal("docs/design.md has no numbered sections")
	}
	return secs
}

// citation is "docs/design.md §N", possibly "§N, §M", possibly broken
// across comment lines ("docs/design.md\n// §16").
var (
	citation    = regexp.MustCompile(`docs/design\.md(?:[\s/#*-]|\]\()*((?:§\d+(?:\s*,\s*|\s+and\s+)?)+)`)
	sectionNum  = regexp.MustCompile(`§(\d+)`)
	outsideCite = regexp.MustCompile(`\bDESIGN(?:\.md)?(?:\s|//|#|-)*(?:§|section)`)
)

// citedSections returns the design sections text cites, and each citation
// of the design document that is not in the repository.
func citedSections(text string) (cited []string, outside []string) {
	for _, m := range citation.FindAllStringSubmatch(text, -1) {
		for _, n := range sectionNum.FindAllStringSubmatch(m[1], -1) {
			cited = append(cited, n[1])
		}
	}
	outside = outsideCite.FindAllString(text, -1)
	return cited, outside
}

// citingFiles are the files whose comments or text may cite the design.
func citingFile(path string) bool {
	switch filepath.Ext(path) {
	case ".go", ".md", ".sql", ".yaml", ".yml", ".txt":
		return true
	}
	return false
}

// citingText is what of a file may cite the design: a Go file's comments
// (a string literal is output, not a citation), any other file whole.
func citingText(path string) (string, error) {
	if filepath.Ext(path) != ".go" {
		b, err := os.ReadFile(path)
		return string(b), err
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, g := range f.Comments {
		b.WriteString(g.Text())
		b.WriteString("\n")
	}
	return b.String(), nil
}

// Issue 22: every citation of the design in the repository (Go comments,
// Markdown, SQL and YAML comments) names a section docs/design.md has, and
// none cites the design document that lives outside the repository.
func TestDesignCitationsResolve(t *testing.T) {
	secs := designSections(t)
	files := 0
	cites := 0
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != repoRoot && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !citingFile(path) {
			return nil
		}
		text, err := citingText(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		cited, outside := citedSections(text)
		files++
		cites += len(cited)
		for _, n := range cited {
			if !secs[n] {
				t.Errorf("%s cites docs/design.md §%s, which docs/design.md does not have", rel, n)
			}
		}
		for _, o := range outside {
			t.Errorf("%s cites %q, a document outside the repository; cite docs/design.md §N", rel, o)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d citations of docs/design.md in %d files", cites, files)
	if cites == 0 {
		t.Fatalf("no design citations found in %d files: is the walk rooted at the repository?", files)
	}
}

// The citation pattern itself: what it must find and what it must not
// take for a citation of the repository's design.
func TestCitedSections(t *testing.T) {
	for _, c := range []struct {
		text    string
		cited   []string
		outside int
	}{
		{"// A tool (docs/design.md §4, §14): x", []string{"4", "14"}, 0},
		{"// alive (docs/design.md\n// §16): with", []string{"16"}, 0},
		{"-- 0002: one row (docs/design.md §13). The", []string{"13"}, 0},
		{"console ([docs/design.md §17](design.md)). A", []string{"17"}, 0},
		{"// the contract (DESIGN" + " §12)", nil, 1},
		{"See DESIGN.md" + " section 14", nil, 1},
		{"// see docs/design.md for the layout", nil, 0},
	} {
		cited, outside := citedSections(c.text)
		if !slices.Equal(cited, c.cited) || len(outside) != c.outside {
			t.Errorf("%q: cited %v, outside %v; want %v and %d", c.text, cited, outside, c.cited, c.outside)
		}
	}
}

// Issue 22: every repository path docs/design.md names in code spans
// (`core/engine.go`, `adapters/render/`) exists, so the page cannot drift
// from the tree unnoticed.
func TestDesignCodeReferencesExist(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	tops := map[string]bool{}
	entries, err := os.ReadDir(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			tops[e.Name()] = true
		}
	}
	checked := 0
	for _, m := range regexp.MustCompile("`([^`\\s]+)`").FindAllStringSubmatch(string(b), -1) {
		ref := m[1]
		top, _, ok := strings.Cut(ref, "/")
		if !ok || !tops[top] {
			continue // not a path in the repository (a key, a URL, a command)
		}
		checked++
		if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(strings.TrimSuffix(ref, "/")))); err != nil {
			t.Errorf("docs/design.md names %s, which does not exist", ref)
		}
	}
	if checked < 20 {
		t.Errorf("docs/design.md names only %d repository paths", checked)
	}
}
