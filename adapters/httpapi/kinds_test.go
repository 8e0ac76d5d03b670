package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
)

// refusingEngine is the real engine, except that Decide and Handle fail
// with the error set last.
type refusingEngine struct {
	httpapi.Engine
	mu  sync.Mutex
	err error
}

func (e *refusingEngine) set(err error) { e.mu.Lock(); e.err = err; e.mu.Unlock() }

func (e *refusingEngine) failure() error { e.mu.Lock(); defer e.mu.Unlock(); return e.err }

func (e *refusingEngine) Decide(ctx context.Context, d core.Decision) (core.Approval, error) {
	if err := e.failure(); err != nil {
		return core.Approval{}, err
	}
	return e.Engine.Decide(ctx, d)
}

func (e *refusingEngine) Handle(ctx context.Context, in core.Inbound) error {
	if err := e.failure(); err != nil {
		return err
	}
	return e.Engine.Handle(ctx, in)
}

// Issue 22 acceptance 5: the API answers every kind of core's one table
// with the table's status and code and its description, whether a
// decision or a message was refused; an internal failure shows none of
// the error's own text.
func TestAPIAnswersEveryErrorKindFromTheKindTable(t *testing.T) {
	refusing := &refusingEngine{}
	r := newRig(t, func(o *httpapi.Options, _ *enginetest.Stack) {
		refusing.Engine = o.Engine
		o.Engine = refusing
	})
	a := r.pauseForScale()
	for _, k := range core.Kinds() {
		t.Run(k.String(), func(t *testing.T) {
			info := k.Info()
			refusing.set(fmt.Errorf("core: %w", core.NewKindError(k, "the engine's own words")))
			defer refusing.set(nil)
			for _, req := range []struct{ path, body string }{
				{"/api/v1/approvals/" + a.ID + "/decision", `{"decision":"approve"}`},
				{"/api/v1/conversations/api:kinds/messages", `{"text":"hello"}`},
			} {
				status, raw := r.do(r.tokens["alice"], "POST", req.path, strings.NewReader(req.body))
				code, msg := errorCode(t, raw)
				if status != info.Status || code != info.Code {
					t.Errorf("POST %s = %d %s, want the table's %d %s", req.path, status, code, info.Status, info.Code)
				}
				if !strings.HasSuffix(msg, info.Text) || strings.Contains(msg, "own words") {
					t.Errorf("POST %s said %q, want the table's description %q and not the error's text", req.path, msg, info.Text)
				}
			}
		})
	}
	if status, raw := r.do(r.tokens["alice"], "GET", "/api/v1/runs/no-such-run", nil); status != core.KindNotFound.Info().Status {
		t.Errorf("GET an unknown run = %d %s, want the table's not-found status", status, raw)
	} else if code, _ := errorCode(t, raw); code != core.KindNotFound.Info().Code {
		t.Errorf("GET an unknown run's code = %q", code)
	}
	if status, _ := r.do(r.tokens["alice"], "GET", "/api/v1/approvals?status=done", nil); status != http.StatusBadRequest {
		t.Errorf("a bad parameter = %d, want the table's invalid 400", status)
	}
}
