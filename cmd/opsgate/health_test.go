package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/internal/readiness"
)

// served is `opsgate serve` running in-process.
type served struct {
	base   string // http://host:port of server.listen
	log    *coretest.SyncBuffer
	done   chan int
	cancel context.CancelFunc
}

// serve starts `opsgate serve --config cfg` and waits until it listens.
func serveConfig(t *testing.T, cfg string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{log: &coretest.SyncBuffer{}, done: make(chan int, 1), cancel: cancel}
	go func() {
		s.done <- Main(ctx, []string{"serve", "--config", cfg}, nil, &coretest.SyncBuffer{}, s.log, testEnv())
	}()
	t.Cleanup(func() { s.stop(t) })
	addrRE := regexp.MustCompile(`msg="opsgate serving".* addr=(\S+)`)
	waitLog(t, s.log, s.done, addrRE)
	s.base = "http://" + addrRE.FindStringSubmatch(s.log.String())[1]
	return s
}

// stop ends serve as SIGTERM does and checks that it exited cleanly.
func (s *served) stop(t *testing.T) {
	t.Helper()
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case code := <-s.done:
		if code != exitOK {
			t.Errorf("serve exited with %d:\n%s", code, s.log.String())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("serve did not stop")
	}
}

// readyz fetches /readyz once.
func (s *served) readyz(t *testing.T) (int, readinessReport) {
	t.Helper()
	body, code := get(t, s.base+"/readyz")
	var rep readinessReport
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatalf("GET /readyz = %d, body is not JSON (%v):\n%s", code, err, body)
	}
	if (code == http.StatusOK) != rep.Ready || (code != http.StatusOK && code != http.StatusServiceUnavailable) {
		t.Fatalf("GET /readyz = %d with ready=%v:\n%s", code, rep.Ready, body)
	}
	return code, rep
}

// waitReadyz polls /readyz until it answers code, and returns the report.
func (s *served) waitReadyz(t *testing.T, code int) readinessReport {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		got, rep := s.readyz(t)
		if got == code {
			return rep
		}
		select {
		case c := <-s.done:
			t.Fatalf("serve exited with %d:\n%s", c, s.log.String())
		case <-deadline:
			t.Fatalf("/readyz still %d after 30 s, want %d: %+v", got, code, rep)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// readinessReport is the body of /readyz, with a lookup for the tests.
type readinessReport readiness.Report

// component is one line of /readyz.
type component = readiness.Component

func (r readinessReport) component(t *testing.T, name string) component {
	t.Helper()
	for _, c := range r.Components {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("/readyz has no component %q: %+v", name, r.Components)
	return component{}
}

func telegramConfig(tg *telegramtest.Server) string {
	return fmt.Sprintf("telegram:\n  token: %q\n  api_url: %s\n  allowed_users: [42]\n", telegramtest.Token, tg.URL)
}

// Issue 9 acceptance 5: /readyz turns unready (503, JSON naming the
// component) when the Telegram fake stops answering and ready again when
// it returns.
func TestReadyzFollowsTelegram(t *testing.T) {
	dir := t.TempDir()
	tg := telegramtest.New(t)
	model := llmfake.New(t)
	s := serveConfig(t, writeConfig(t, dir, model.URL, "", telegramConfig(tg)))

	rep := s.waitReadyz(t, http.StatusOK)
	if c := rep.component(t, "store"); !c.OK {
		t.Errorf("store: %+v", c)
	}
	if c := rep.component(t, "model"); !c.OK || !strings.Contains(c.Detail, "answered a ping") {
		t.Errorf("model: %+v, want it answering a ping", c)
	}
	if c := rep.component(t, "adapter:telegram"); !c.OK {
		t.Errorf("adapter:telegram: %+v", c)
	}
	if body, code := get(t, s.base+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("GET /healthz = %d %q, want 200 ok", code, body)
	}

	tg.Outage()
	rep = s.waitReadyz(t, http.StatusServiceUnavailable)
	if c := rep.component(t, "adapter:telegram"); c.OK || !strings.Contains(c.Detail, "polling failing for") || !strings.Contains(c.Detail, "Bad Gateway") {
		t.Errorf("adapter:telegram during the outage: %+v, want it failing with Telegram's 502", c)
	}
	for _, name := range []string{"store", "model"} {
		if c := rep.component(t, name); !c.OK {
			t.Errorf("%s during the Telegram outage: %+v, want ok (only Telegram is down)", name, c)
		}
	}
	// Liveness is not readiness: the process is fine.
	if _, code := get(t, s.base+"/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz during the outage = %d, want 200", code)
	}

	tg.Restore()
	rep = s.waitReadyz(t, http.StatusOK)
	if c := rep.component(t, "adapter:telegram"); !c.OK || !strings.HasPrefix(c.Detail, "polling ok for ") {
		t.Errorf("adapter:telegram after the outage: %+v", c)
	}
	s.stop(t)
}

// A model endpoint that does not answer makes the replica unready, named.
func TestReadyzNamesADeadModel(t *testing.T) {
	dir := t.TempDir()
	tg := telegramtest.New(t)
	s := serveConfig(t, writeConfig(t, dir, "http://127.0.0.1:1/v1", "", telegramConfig(tg)))
	// Wait for Telegram, so that the model is the only reason.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, rep := s.readyz(t)
		if rep.component(t, "adapter:telegram").OK {
			if rep.Ready {
				t.Fatalf("ready with a dead model: %+v", rep)
			}
			if c := rep.component(t, "model"); c.OK || !strings.Contains(c.Detail, "127.0.0.1:1") {
				t.Errorf("model: %+v, want it failing, naming the endpoint", c)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Telegram never connected: %+v", rep)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.stop(t)
}
