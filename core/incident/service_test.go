package incident

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

// memStore is an in-memory Store with the same compare-and-set rules as
// the SQL stores (memory/incidents_test.go holds those to them).
type memStore struct {
	mu sync.Mutex
	m  map[string]Record
}

func (s *memStore) LatestIncident(_ context.Context, g string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best Record
	ok := false
	for _, r := range s.m {
		if r.GroupKey == g && (!ok || r.Seq > best.Seq) {
			best, ok = r, true
		}
	}
	return best, ok, nil
}

func (s *memStore) Incident(_ context.Context, key string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.m[key]
	return r, ok, nil
}

func (s *memStore) IncidentByThread(_ context.Context, thread string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.m {
		if thread != "" && r.Thread == thread {
			return r, true, nil
		}
	}
	return Record{}, false, nil
}

func (s *memStore) SaveIncident(_ context.Context, r Record) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.m[r.Key]
	if r.Version == 0 && ok || r.Version != 0 && (!ok || cur.Version != r.Version) {
		return r, ErrConflict
	}
	r.Version++
	s.m[r.Key] = r
	return r, nil
}

type recPlace struct {
	fail  bool
	roots []string
	said  []string
	edits int
}

func (p *recPlace) PostRoot(_ context.Context, where, text, _ string) (string, string, error) {
	if p.fail {
		return "", "", errors.New("chat down")
	}
	p.roots = append(p.roots, text)
	return "chat:" + where + ":1", where + "/1", nil
}
func (p *recPlace) EditRoot(context.Context, string, string) error { p.edits++; return nil }
func (p *recPlace) Say(_ context.Context, _, text string) error {
	p.said = append(p.said, text)
	return nil
}

type recRuns struct{ started []core.Inbound }

func (r *recRuns) Start(_ context.Context, _ string, _ []string, in core.Inbound) error {
	r.started = append(r.started, in)
	return nil
}

// A root that could not be posted is posted (with its triage) by a later
// notification once the opener had its minute; a group no target matches
// stores nothing.
func TestServicePostsARootItsOpenerCouldNot(t *testing.T) {
	now := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	st, place, runs := &memStore{m: map[string]Record{}}, &recPlace{fail: true}, &recRuns{}
	s := &Service{Store: st, Runs: runs, Targets: []Target{{Match: map[string]string{"severity": "critical"}, To: "chat:C1"}},
		Places: func(string) Place { return place }, Now: func() time.Time { return now }}
	ctx := context.Background()

	warning := note(Firing, alert("w", Firing, now))
	warning.GroupKey = "other"
	warning.Alerts[0].Labels["severity"] = "warning"
	if err := s.Take(ctx, warning); err != nil || len(st.m) != 0 {
		t.Fatalf("unmatched group: %v, %d stored", err, len(st.m))
	}

	n := note(Firing, alert("a", Firing, now))
	if err := s.Take(ctx, n); err == nil {
		t.Fatal("Take succeeded although the root could not be posted")
	}
	place.fail = false
	now = now.Add(10 * time.Second)
	if err := s.Take(ctx, n); err != nil || len(place.roots) != 0 {
		t.Fatalf("within the opener's minute: %v, %d roots", err, len(place.roots))
	}
	now = now.Add(time.Minute)
	if err := s.Take(ctx, n); err != nil {
		t.Fatal(err)
	}
	if len(place.roots) != 1 || len(runs.started) != 1 || runs.started[0].User.ID != "alertmanager:opsgate" {
		t.Fatalf("after the minute: %d roots, runs %+v", len(place.roots), runs.started)
	}
	if k := s.ConversationOf(ctx, "chat:C1:1"); k != Key(n.GroupKey, 1) {
		t.Errorf("ConversationOf the thread = %q", k)
	}
	if err := s.Take(ctx, n); err != nil || len(place.roots) != 1 || len(runs.started) != 1 || place.edits != 1 {
		t.Errorf("a repeat: %v, %d roots, %d runs, %d edits", err, len(place.roots), len(runs.started), place.edits)
	}
}
