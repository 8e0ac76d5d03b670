package timeline

import (
	"path/filepath"
	"testing"

	"github.com/opsgate/opsgate/internal/golden"
)

// The JSON form is a format others parse (the API, --format json): a
// change to it shows here (go test ./core/timeline -run Golden -update).
func TestTimelineJSONGolden(t *testing.T) {
	b, err := drillTimeline("web is down").JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "drill.json"), b)
}
