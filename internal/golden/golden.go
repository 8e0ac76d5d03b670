// Package golden compares what a test produced with a file kept under
// testdata, for what people see (cards, drafts, prompts, explanations):
// a change to it shows as a diff in review. Run the tests with -update
// to rewrite the files instead (go test ./adapters/slack/ -run Golden
// -update), then read the diff before committing.
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files instead of comparing with them")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Check compares got with the file at path (relative to the test's
// package directory, e.g. testdata/golden/card.json), or under -update
// writes got there, creating its directory.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; run with -update if the change is meant):\n%s", path, diff)
	}
}

// CheckJSON is Check of v as indented JSON, HTML left as it is (a
// Telegram message's <b> stays readable), with a final newline.
func CheckJSON(t testing.TB, path string, v any) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	Check(t, path, b.Bytes())
}
