// Package amtest runs a real Prometheus Alertmanager for tests: the
// binary deployments/alertmanager/build.sh builds from the Go module
// (v0.35.0), on a free 127.0.0.1 port, without gossip, with its storage in
// a temporary directory and one webhook receiver that posts to a URL the
// test gives, with a bearer token, as a production configuration would.
// Alerts go in through Alertmanager's own API (POST /api/v2/alerts), so
// grouping, repeats and resolve notifications come from Alertmanager
// itself.
//
// Without the binary a test is skipped with a loud message naming the
// command that builds it, except under CI=true, where that is a failure:
// CI must never report green for a suite it did not run.
package amtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/internal/proctest"
)

// Version is the Alertmanager release the tests run.
const Version = "v0.35.0"

// EnvCache names the directory build.sh caches the binaries in (its bin/
// holds them); the default is $HOME/.cache/opsgate/alertmanager-v0.35.0.
const EnvCache = "OPSGATE_ALERTMANAGER_CACHE"

// BuildCommand is what builds the binary, as the skip message says.
const BuildCommand = "deployments/alertmanager/build.sh (or make alertmanager)"

// Find returns the path of the alertmanager binary, or an error saying how
// to build it.
func Find() (string, error) {
	dir := os.Getenv(EnvCache)
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("amtest: no home directory for the cache (set $%s): %w", EnvCache, err)
		}
		dir = filepath.Join(home, ".cache", "opsgate", "alertmanager-"+Version)
	}
	p := filepath.Join(dir, "bin", "alertmanager")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("amtest: no Alertmanager at %s; build it with %s", p, BuildCommand)
	}
	return p, nil
}

// Config is what the receiver and the timing of a test Alertmanager are.
type Config struct {
	// WebhookURL is where notifications go (opsgate's /hooks/alertmanager).
	WebhookURL string
	// MoreWebhookURLs get every notification too (more webhook_configs of
	// the receiver, as for several opsgate replicas).
	MoreWebhookURLs []string
	// Token is sent as Authorization: Bearer (http_config.authorization).
	Token string
	// Receiver names the receiver (default "opsgate").
	Receiver string
	// GroupBy are the labels alerts are grouped by (default alertname).
	GroupBy []string
	// GroupWait, GroupInterval and RepeatInterval default to 1 s, 2 s and
	// 4 s: a first notification about a second after the first alert,
	// repeats about every 6 s (they land on group_interval ticks).
	GroupWait, GroupInterval, RepeatInterval time.Duration
	// ResolveTimeout is how long an alert without endsAt stays firing
	// (default 5m: tests resolve explicitly).
	ResolveTimeout time.Duration
}

// Alert is one alert as POST /api/v2/alerts takes it.
type Alert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	StartsAt     time.Time         `json:"startsAt,omitzero"`
	EndsAt       time.Time         `json:"endsAt,omitzero"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

// Alertmanager is one running Alertmanager, owned by one test.
type Alertmanager struct {
	// URL is its base URL (http://127.0.0.1:PORT).
	URL string
	t   testing.TB
	cmd *exec.Cmd
	log *coretest.SyncBuffer

	mu    sync.Mutex
	fired map[string]Alert // by the alert's labels, for Resolve
}

// Start runs an Alertmanager for t and stops it (by its PID) when t ends.
func Start(t testing.TB, c Config) *Alertmanager {
	t.Helper()
	bin, err := Find()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no Alertmanager: %v", err)
		}
		msg := "Alertmanager tests SKIPPED: " + err.Error() + " (" + t.Name() + ")"
		fmt.Fprintln(os.Stderr, "!!! "+msg)
		t.Skip(msg)
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(cfgPath, []byte(configYAML(c)), 0o600); err != nil {
		t.Fatal(err)
	}
	ports, err := proctest.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	port := ports[0]
	am := &Alertmanager{URL: "http://127.0.0.1:" + strconv.Itoa(port), t: t, log: &coretest.SyncBuffer{}, fired: map[string]Alert{}}
	am.cmd = exec.Command(bin,
		"--config.file="+cfgPath,
		"--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:"+strconv.Itoa(port),
		"--cluster.listen-address=", // no gossip: one instance
		"--log.level=debug",
	)
	am.cmd.Stdout, am.cmd.Stderr = am.log, am.log
	if err := proctest.Start(am.cmd); err != nil {
		t.Fatalf("amtest: start %s: %v", bin, err)
	}
	pid := am.cmd.Process.Pid
	exited := make(chan struct{})
	go func() { am.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		proctest.Stop(pid, exited, 10*time.Second)
		if t.Failed() {
			t.Logf("alertmanager log:\n%s", am.log.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(am.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return am
			}
		}
		select {
		case <-exited:
			t.Fatalf("amtest: alertmanager exited at start:\n%s", am.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("amtest: alertmanager not ready after 30 s:\n%s", am.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Log is what Alertmanager wrote so far.
func (am *Alertmanager) Log() string { return am.log.String() }

// Fire posts alerts as firing (startsAt now unless set).
func (am *Alertmanager) Fire(alerts ...Alert) {
	am.t.Helper()
	now := time.Now().UTC()
	am.mu.Lock()
	for i := range alerts {
		if alerts[i].StartsAt.IsZero() {
			alerts[i].StartsAt = now
		}
		am.fired[labelKey(alerts[i].Labels)] = alerts[i]
	}
	am.mu.Unlock()
	am.post(alerts)
}

// Resolve posts alerts as resolved: endsAt now, with the startsAt they
// were fired with, so Alertmanager sees the same alert end.
func (am *Alertmanager) Resolve(alerts ...Alert) {
	am.t.Helper()
	now := time.Now().UTC()
	am.mu.Lock()
	for i := range alerts {
		if f, ok := am.fired[labelKey(alerts[i].Labels)]; ok {
			if alerts[i].StartsAt.IsZero() {
				alerts[i].StartsAt = f.StartsAt
			}
			if alerts[i].Annotations == nil {
				alerts[i].Annotations = f.Annotations
			}
			if alerts[i].GeneratorURL == "" {
				alerts[i].GeneratorURL = f.GeneratorURL
			}
		}
		alerts[i].EndsAt = now
	}
	am.mu.Unlock()
	am.post(alerts)
}

func (am *Alertmanager) post(alerts []Alert) {
	am.t.Helper()
	body, err := json.Marshal(alerts)
	if err != nil {
		am.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, am.URL+"/api/v2/alerts", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		am.t.Fatalf("amtest: POST /api/v2/alerts: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		am.t.Fatalf("amtest: POST /api/v2/alerts = %d: %s", resp.StatusCode, b.String())
	}
}

// Notifications counts the webhook notifications Alertmanager reports it
// sent successfully so far (from its debug log).
func (am *Alertmanager) Notifications() int {
	return strings.Count(am.log.String(), "Notify success")
}

func labelKey(l map[string]string) string {
	b, _ := json.Marshal(l) // map keys are sorted
	return string(b)
}

func configYAML(c Config) string {
	if c.Receiver == "" {
		c.Receiver = "opsgate"
	}
	if len(c.GroupBy) == 0 {
		c.GroupBy = []string{"alertname"}
	}
	or := func(d, def time.Duration) string {
		if d <= 0 {
			d = def
		}
		return d.String()
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	var groupBy []string
	for _, g := range c.GroupBy {
		groupBy = append(groupBy, q(g))
	}
	return fmt.Sprintf(`global:
  resolve_timeout: %s
route:
  receiver: %s
  group_by: [%s]
  group_wait: %s
  group_interval: %s
  repeat_interval: %s
receivers:
  - name: %s
    webhook_configs:
`, or(c.ResolveTimeout, 5*time.Minute), q(c.Receiver), strings.Join(groupBy, ", "),
		or(c.GroupWait, time.Second), or(c.GroupInterval, 2*time.Second), or(c.RepeatInterval, 4*time.Second),
		q(c.Receiver)) + webhooks(append([]string{c.WebhookURL}, c.MoreWebhookURLs...), q(c.Token))
}

func webhooks(urls []string, token string) string {
	var b strings.Builder
	for _, u := range urls {
		b.WriteString("      - url: " + strconv.Quote(u) + "\n        send_resolved: true\n" +
			"        http_config:\n          authorization:\n            type: Bearer\n            credentials: " + token + "\n")
	}
	return b.String()
}
