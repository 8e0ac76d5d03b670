package amtest_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/opsgate/opsgate/internal/amtest"
)

// A fired alert reaches the webhook as version 4 JSON with the bearer
// token; a resolved one arrives as status "resolved".
func TestAlertmanagerDeliversFiringAndResolved(t *testing.T) {
	type note struct {
		Version, Status, GroupKey, Auth string
	}
	var mu sync.Mutex
	var got []note
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n note
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		n.Auth = r.Header.Get("Authorization")
		mu.Lock()
		got = append(got, n)
		mu.Unlock()
	}))
	defer hook.Close()
	am := amtest.Start(t, amtest.Config{WebhookURL: hook.URL, Token: "s3cret"})
	a := amtest.Alert{Labels: map[string]string{"alertname": "Down", "severity": "critical"}}
	am.Fire(a)
	wait := func(status string) note {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			for _, n := range got {
				if n.Status == status {
					mu.Unlock()
					return n
				}
			}
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("no %s notification in 20 s; got %+v\n%s", status, got, am.Log())
		return note{}
	}
	n := wait("firing")
	if n.Version != "4" || n.GroupKey == "" || n.Auth != "Bearer s3cret" {
		t.Errorf("notification %+v: want version 4, a group key and the bearer token", n)
	}
	am.Resolve(a)
	wait("resolved")
}
