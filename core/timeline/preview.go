package timeline

import (
	"encoding/json"

	"github.com/opsgate/opsgate/core"
)

// PreviewOf is the one line an approval's preview showed (its summary,
// and why it went stale), or false. It reads the approval's JSON form,
// the API's contract ("preview": {"summary", "stale"}), so that it does
// not depend on which fields core.Approval has.
func PreviewOf(a core.Approval) (string, bool) {
	b, err := json.Marshal(a)
	if err != nil {
		return "", false
	}
	var v struct {
		Preview *struct {
			Summary string `json:"summary"`
			Stale   string `json:"stale"`
		} `json:"preview"`
	}
	if json.Unmarshal(b, &v) != nil || v.Preview == nil || v.Preview.Summary == "" {
		return "", false
	}
	s := v.Preview.Summary
	if v.Preview.Stale != "" {
		s += " (stale: " + v.Preview.Stale + ")"
	}
	return s, true
}
