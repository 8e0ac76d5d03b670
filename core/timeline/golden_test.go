package timeline

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// The JSON form is a format others parse (the API, --format json): a
// change to it shows here.
func TestTimelineJSONGolden(t *testing.T) {
	b, err := drillTimeline("web is down").JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "drill.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(want) {
		t.Errorf("the timeline's JSON differs from %s (go test ./core/timeline -run %s -update):\n%s", golden, t.Name(), b)
	}
}
