package incident

import (
	"errors"
	"testing"
)

// FuzzParse: any body is a notification or ErrInvalid; a notification
// Parse accepts has a group key, a known status and alerts that each have
// labels, a known status and a fingerprint.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"version":"4","groupKey":"g","status":"firing","receiver":"r","alerts":[{"status":"firing","labels":{"alertname":"A"}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := Parse(body)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse error %v is not ErrInvalid", err)
			}
			return
		}
		if n.Version != "4" || n.GroupKey == "" || n.Status != Firing && n.Status != Resolved || len(n.Alerts) == 0 {
			t.Fatalf("accepted %+v", n)
		}
		for _, a := range n.Alerts {
			if len(a.Labels) == 0 || a.Fingerprint == "" || a.Status != Firing && a.Status != Resolved {
				t.Fatalf("accepted alert %+v", a)
			}
		}
	})
}
