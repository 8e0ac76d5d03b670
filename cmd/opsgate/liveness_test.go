package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/internal/pgtest"
	"github.com/opsgate/opsgate/memory"
)

// Issue 20 (DESIGN §16): a replica's liveness, and schedule fires that
// live with their replica.

// ownPostgres points cfg at a PostgreSQL server of the test's own, which
// the test may stop and restart.
func ownPostgres(t *testing.T, cfg string) (*pgtest.Cluster, string) {
	t.Helper()
	pgtest.Server(t) // skips (or fails under CI) without PostgreSQL
	cluster, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	url := cluster.URL("postgres")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b = regexp.MustCompile(`(?m)^  url: sqlite://.*$`).ReplaceAll(b, []byte("  url: "+url))
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return cluster, url
}

// livenessOf reads the liveness component of /readyz and the
// opsgate_replica_liveness gauge.
func livenessOf(t *testing.T, s *served) (comp component, found bool, gauge string) {
	t.Helper()
	_, rep := s.readyz(t)
	for _, c := range rep.Components {
		if c.Name == "liveness" {
			comp, found = c, true
		}
	}
	body, _ := get(t, s.base+"/metrics")
	if m := regexp.MustCompile(`(?m)^opsgate_replica_liveness (\S+)$`).FindStringSubmatch(body); m != nil {
		gauge = m[1]
	}
	return comp, found, gauge
}

func waitLiveness(t *testing.T, s *served, ok bool, gauge string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, found, g := livenessOf(t, s)
		if found && c.OK == ok && g == gauge {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz liveness = %+v (found %v), opsgate_replica_liveness = %q; want ok=%v and %s", c, found, g, ok, gauge)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// While PostgreSQL is down the replica says it cannot show it is alive:
// /readyz has component liveness not OK and the gauge is 0; once the
// server is back, the replica re-takes its liveness and both say so.
func TestReadyzAndGaugeSayLivenessLostWhilePostgresIsDown(t *testing.T) {
	dir := t.TempDir()
	model := llmfake.New(t)
	cfg := writeConfig(t, dir, model.URL, "", "schedules:\n  - {name: health, cron: '@every 1h', prompt: 'how are the nodes?', target: log}\n")
	cluster, _ := ownPostgres(t, cfg)
	s := serveConfig(t, cfg)
	waitLiveness(t, s, true, "1")
	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	waitLiveness(t, s, false, "0")
	if err := cluster.Restart(); err != nil {
		t.Fatal(err)
	}
	waitLiveness(t, s, true, "1")
}

// fires reads the ledger of schedule name.
func fires(t *testing.T, url, name string) []core.Fire {
	t.Helper()
	st, err := memory.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fs, err := st.(core.FireLedger).Fires(context.Background(), name, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// A replica stopped by SIGTERM right after a fire records the fire (done
// when its run finished, interrupted otherwise) instead of leaving it
// running, and `opsgate schedules run` of that schedule is not refused
// afterwards (it used to be, for an hour).
func TestFireRecordedAtGracefulShutdown(t *testing.T) {
	dir := t.TempDir()
	model := llmfake.New(t)
	// The fire's run is going at SIGTERM: it ends within the drain (done)
	// or is cut short (interrupted); either way it is recorded.
	model.Push(llmfake.Reply{Text: "Slow answer.", FirstTokenDelay: 3 * time.Second}, llmfake.Reply{Text: "All nodes are Ready."})
	cfg := writeConfig(t, dir, model.URL, "", "schedules:\n  - {name: health, cron: '@every 2s', prompt: 'how are the nodes?', target: log}\n")
	url := "sqlite://" + dir + "/data/opsgate.db"
	r := startReplica(t, dir, cfg, "a")
	waitFor(t, 15*time.Second, "a fire", func() bool { return strings.Contains(r.log.String(), "schedule: fire") })
	r.stop()
	fs := fires(t, url, "health")
	if len(fs) == 0 {
		t.Fatalf("no fire recorded:\n%s", r.log.String())
	}
	for _, f := range fs {
		if f.Outcome == core.FireRunning {
			t.Errorf("after SIGTERM the fire at %s is still %q", f.At.Format(time.RFC3339), f.Outcome)
		}
	}
	code, stdout, stderr := runMain(t, testEnv(), "schedules", "run", "health", "--config", cfg)
	if code != exitOK {
		t.Fatalf("schedules run after the replica stopped: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// `opsgate schedules run NAME` is refused while a live replica's fire of
// the schedule runs, naming the replica; once that replica is killed
// (kill -9), it is not refused, within the hold lapse (15 s) rather than
// after the one-hour stale limit.
func TestSchedulesRunRefusedOnlyForALiveReplicasFire(t *testing.T) {
	dir := t.TempDir()
	model := llmfake.New(t)
	hold := make(chan struct{})
	defer close(hold)
	model.Push(llmfake.Reply{Text: "Never finishes.", Hold: hold}, llmfake.Reply{Text: "All nodes are Ready."})
	// One fire, at start (the one missed within catch_up), none after.
	cfg := writeConfig(t, dir, model.URL, "", "schedules:\n  - {name: health, cron: '@every 1h', catch_up: 1h, prompt: 'how are the nodes?', target: log}\n")
	_, url := ownPostgres(t, cfg)
	r := startReplica(t, dir, cfg, "a")
	waitFor(t, 15*time.Second, "the fire's model request", func() bool { return len(model.Requests()) == 1 })
	fs := fires(t, url, "health")
	var by string
	for _, f := range fs {
		if f.Outcome == core.FireRunning {
			by = f.By
		}
	}
	if by == "" {
		t.Fatalf("no running fire: %+v", fs)
	}
	code, stdout, stderr := runMain(t, testEnv(), "schedules", "run", "health", "--config", cfg)
	if code == exitOK || !strings.Contains(stderr, "still going") || !strings.Contains(stderr, by) {
		t.Fatalf("schedules run while a live replica's fire runs: exit %d, want refused naming replica %s\nstdout:\n%s\nstderr:\n%s", code, by, stdout, stderr)
	}
	if err := syscall.Kill(r.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-r.done
	deadline := time.Now().Add(30 * time.Second)
	for {
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second))) // a new fire second
		code, stdout, stderr := runMain(t, testEnv(), "schedules", "run", "health", "--config", cfg)
		if code == exitOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("schedules run still refused 30 s after the fire's replica was killed: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		time.Sleep(2 * time.Second)
	}
}
