package memory

import "testing"

// A title taken from the file name is trimmed as one from the front
// matter is, so that export and import keep it (found by FuzzFrontMatter:
// the file " 0" was titled " 0", and "0" once exported).
func TestFileNameTitleIsTrimmed(t *testing.T) {
	d, err := parseDocument("runbooks/ restart web .md", []byte("steps"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "restart web" {
		t.Errorf("title %q, want %q", d.Title, "restart web")
	}
}
