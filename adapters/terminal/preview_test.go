package terminal_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/core"
)

// A request's preview arrives after it was asked: the terminal prints the
// whole diff under it and asks once; a stale approval says it did not run,
// and the request asked again says what changed.
func TestRenderPreviewOfARequest(t *testing.T) {
	scale := approval("a1", "resources_scale", core.RiskWrite, `{"name":"web","scale":5}`)
	scale.Preview = &core.Preview{Status: core.PreviewPending}
	ready := *scale
	ready.Preview = &core.Preview{Status: core.PreviewReady, Summary: "replicas: 2 → 5", Diff: " Deployment prod/web\n-replicas: 2\n+replicas: 5", Hash: "h1"}
	stale := decided(&ready, core.ApprovalApproved, alice, "")
	stale.Preview = &core.Preview{Status: core.PreviewReady, Summary: "replicas: 2 → 5", Hash: "h1",
		Stale: `not run: changed since it was approved: was "replicas: 2 → 5", now "replicas: 4 → 5"; asked again in a new request`}
	again := approval("a2", "resources_scale", core.RiskWrite, `{"name":"web","scale":5}`)
	again.Preview = &core.Preview{Status: core.PreviewReady, Summary: "replicas: 4 → 5", Diff: "-replicas: 4\n+replicas: 5", Hash: "h2",
		Changed: `changed since it was approved: was "replicas: 2 → 5", now "replicas: 4 → 5"`}
	none := approval("a3", "set_size", core.RiskWrite, `{"size":3}`)
	none.Preview = &core.Preview{Status: core.PreviewNone, Why: "timed out"}
	events := []core.Event{
		{Type: core.EventToolAwaitingApproval, Approval: scale},
		{Type: core.EventToolAwaitingApproval, Approval: &ready},
		{Type: core.EventToolApproved, Approval: stale},
		{Type: core.EventToolAwaitingApproval, Approval: again},
		{Type: core.EventToolAwaitingApproval, Approval: none},
	}
	want := `⚠ approval needed: resources_scale on k8s (write)
    arguments: {"name":"web","scale":5}
    requested by alice, expires in 30m
    what changes (resources_scale): replicas: 2 → 5
       Deployment prod/web
      -replicas: 2
      +replicas: 5
⚠ resources_scale: not run: changed since it was approved: was "replicas: 2 → 5", now "replicas: 4 → 5"; asked again in a new request
⚠ approval needed: resources_scale on k8s (write)
    arguments: {"name":"web","scale":5}
    requested by alice, expires in 30m
    ⚠ changed since it was approved: was "replicas: 2 → 5", now "replicas: 4 → 5"
    what changes (resources_scale): replicas: 4 → 5
      -replicas: 4
      +replicas: 5
⚠ approval needed: set_size on k8s (write)
    arguments: {"size":3}
    requested by alice, expires in 30m
    no preview: timed out
`
	a, out := newAdapter(t, strings.NewReader(""), false, &scriptEngine{})
	for _, ev := range events {
		if err := a.Send(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("rendered (-want +got):\n%s", diff)
	}
}
