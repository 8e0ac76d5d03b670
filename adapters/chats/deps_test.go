package chats_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// stores are the store packages and the drivers they link. An adapter
// reaches what it needs through the engine (chats.Engine, chats.Keeper) or
// an interface of its own, never a store.
var stores = []string{
	"github.com/opsgate/opsgate/memory/postgres",
	"github.com/opsgate/opsgate/memory/sqlite",
	"github.com/jackc/pgx",
	"modernc.org/sqlite",
}

// linksStores may link a store through long-term memory (memory.Open), but
// import none itself: it bridges the API's memory search to memory.
var linksStores = map[string]bool{"github.com/opsgate/opsgate/adapters/httpapi/apimemory": true}

// TestNoAdapterImportsAStore lists every package under adapters/ as built
// (not its tests) with `go list`, in the style of internal/deptest, and
// fails on one that imports a store package, or links a store or database
// driver at all.
func TestNoAdapterImportsAStore(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}`, "github.com/opsgate/opsgate/adapters/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 5 {
		t.Fatalf("go list listed %d adapter packages; want them all", len(lines))
	}
	for _, l := range lines {
		pkg, rest, _ := strings.Cut(l, "|")
		imports, deps, _ := strings.Cut(rest, "|")
		check := func(what, list string) {
			for _, dep := range strings.Fields(list) {
				for _, s := range stores {
					if dep == s || strings.HasPrefix(dep, s+"/") {
						t.Errorf("%s %s %s: adapters reach state through the engine or an interface of their own", pkg, what, dep)
					}
				}
			}
		}
		check("imports", imports)
		if !linksStores[pkg] {
			check("links", deps)
		}
	}
}
