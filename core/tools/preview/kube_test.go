package preview_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/internal/kubetest"
)

// The Kubernetes drills (issue 23, items 2–6) run against a real control
// plane (internal/kubetest) with the npm MCP servers SREs connect to it.

// kubeServer is the named npm server (kubetest's locators) on cluster c,
// as toolset name.
func kubeServer(t *testing.T, c *kubetest.Cluster, server, name string) tools.ServerConfig {
	t.Helper()
	argv := kubetest.MCPServer(t, server)
	return tools.ServerConfig{Name: name, Command: argv[0], Args: argv[1:], Env: c.Env()}
}

// deployment creates Deployment payments-api in ns with replicas, owned by
// the field manager kubernetes-mcp-server uses, as if it had created it.
func deployment(t *testing.T, c *kubetest.Cluster, ns string, replicas int, image, logLevel string) {
	t.Helper()
	c.KubectlIn(t, paymentsManifest(ns, replicas, image, logLevel),
		"apply", "--server-side", "--field-manager=kubernetes-mcp-server", "-f", "-")
}

func paymentsManifest(ns string, replicas int, image, logLevel string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: payments-api
  namespace: ` + ns + `
spec:
  replicas: ` + itoa(replicas) + `
  selector:
    matchLabels: {app: payments-api}
  template:
    metadata:
      labels: {app: payments-api}
    spec:
      containers:
      - name: api
        image: ` + image + `
        env:
        - name: LOG_LEVEL
          value: ` + logLevel + `
        - name: POOL_SIZE
          value: "20"
`
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// jsonpath reads a field of the Deployment with kubectl.
func jsonpath(t *testing.T, c *kubetest.Cluster, ns, path string) string {
	t.Helper()
	return strings.TrimSpace(c.Kubectl(t, "-n", ns, "get", "deployment", "payments-api", "-o", "jsonpath={"+path+"}"))
}

// eventually waits up to 30 s for cond.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, got := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last: %s", what, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func replicasAre(t *testing.T, c *kubetest.Cluster, ns, want string) {
	t.Helper()
	eventually(t, "spec.replicas "+want, func() (bool, string) {
		got := jsonpath(t, c, ns, ".spec.replicas")
		return got == want, got
	})
}

// diffLines are the lines of a card that a diff removes or adds.
func diffLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") {
			out = append(out, l)
		}
	}
	return out
}

// Issue 23, item 2: the scale card says replicas: 2 → 3; Deny leaves 2; a
// new request approved makes 3, with one executed call in the audit.
func TestKubeScaleCardShowsReplicaChange(t *testing.T) {
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "payments")
	deployment(t, c, ns, 2, "registry.example/payments-api:1.4.2", "info")
	s := newStack(t, nil, kubeServer(t, c, kubetest.KubernetesMCPServer, "kube"))
	args := `{"apiVersion":"apps/v1","kind":"Deployment","name":"payments-api","namespace":"` + ns + `","scale":3}`

	root, card := s.ask("kube", "resources_scale", args, "Left at 2.")
	card = s.waitCardText(card, "replicas: 2 → 3")
	s.click(card, "deny")
	s.waitFinal(root, "Left at 2.")
	if got := jsonpath(t, c, ns, ".spec.replicas"); got != "2" {
		t.Fatalf("after Deny spec.replicas = %s, want 2", got)
	}
	if n := len(s.audit(root, core.AuditExecuted)); n != 0 {
		t.Errorf("a denied scale has %d executed entries", n)
	}

	root, card = s.ask("kube", "resources_scale", args, "Scaled to 3.")
	card = s.waitCardText(card, "replicas: 2 → 3")
	s.click(card, "approve")
	s.waitFinal(root, "Scaled to 3.")
	replicasAre(t, c, ns, "3")
	if n := len(s.audit(root, core.AuditExecuted)); n != 1 {
		t.Errorf("%d executed entries, want 1 (preview reads are not tool runs)", n)
	}
}

// Issue 23, item 3: a manifest changing the image and one env var shows
// exactly those two lines changed, none of what the cluster manages;
// Approve makes the live object match.
func TestKubeCreateOrUpdateDiffShowsOnlyImageAndEnv(t *testing.T) {
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "payments")
	deployment(t, c, ns, 2, "registry.example/payments-api:1.4.2", "info")
	s := newStack(t, nil, kubeServer(t, c, kubetest.KubernetesMCPServer, "kube"))
	manifest := paymentsManifest(ns, 2, "registry.example/payments-api:1.5.0", "debug")
	root, card := s.ask("kube", "resources_create_or_update", argsJSON(t, map[string]any{"resource": manifest}), "Rolled out 1.5.0.")
	card = s.waitCardText(card, "What changes", "payments-api:1.5.0")
	t.Logf("the card:\n%s", card.Plain())
	got := diffLines(card.Plain())
	want := map[string]bool{"image: registry.example/payments-api:1.4.2": false, "image: registry.example/payments-api:1.5.0": false,
		"value: info": false, "value: debug": false}
	for _, l := range got {
		for w := range want {
			if strings.HasSuffix(l, w) {
				want[w] = true
			}
		}
	}
	if len(got) != 4 {
		t.Errorf("the diff changes %d lines, want 4 (image and LOG_LEVEL, old and new): %q", len(got), got)
	}
	for w, seen := range want {
		if !seen {
			t.Errorf("the diff lacks a changed line ending %q: %q", w, got)
		}
	}
	for _, noise := range []string{"status", "managedFields", "resourceVersion", "uid:", "creationTimestamp", "generation"} {
		if strings.Contains(strings.Join(got, "\n"), noise) {
			t.Errorf("the diff shows %s", noise)
		}
	}
	s.click(card, "approve")
	s.waitFinal(root, "Rolled out 1.5.0.")
	if img := jsonpath(t, c, ns, ".spec.template.spec.containers[0].image"); img != "registry.example/payments-api:1.5.0" {
		t.Errorf("live image = %s", img)
	}
	if lvl := jsonpath(t, c, ns, ".spec.template.spec.containers[0].env[?(@.name==\"LOG_LEVEL\")].value"); lvl != "debug" {
		t.Errorf("live LOG_LEVEL = %s", lvl)
	}
}

// Issue 23, item 4: the delete card names the Deployment, its namespace,
// replicas and age; Deny leaves it.
func TestKubeDeleteCardNamesWhatGoes(t *testing.T) {
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "payments")
	deployment(t, c, ns, 4, "registry.example/payments-api:1.4.2", "info")
	s := newStack(t, nil, kubeServer(t, c, kubetest.KubernetesMCPServer, "kube"))
	args := `{"apiVersion":"apps/v1","kind":"Deployment","name":"payments-api","namespace":"` + ns + `"}`
	root, card := s.ask("kube", "resources_delete", args, "Kept it.")
	card = s.waitCardText(card, "deletes Deployment payments-api in "+ns, "replicas: 4 (0 ready)", "age ")
	t.Logf("the card:\n%s", card.Plain())
	s.click(card, "deny")
	s.waitFinal(root, "Kept it.")
	if _, err := c.TryKubectl("", "-n", ns, "get", "deployment", "payments-api"); err != nil {
		t.Errorf("the Deployment is gone after Deny: %v", err)
	}
}

// Issue 23, item 5: scale to 5 is requested; the Deployment is scaled to 4
// by hand before the approval; Approve runs nothing (still 4) and a fresh
// card says what changed; approving that one runs it.
func TestKubeStaleApprovalAsksAgain(t *testing.T) {
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "payments")
	deployment(t, c, ns, 2, "registry.example/payments-api:1.4.2", "info")
	s := newStack(t, nil, kubeServer(t, c, kubetest.KubernetesMCPServer, "kube"))
	args := `{"apiVersion":"apps/v1","kind":"Deployment","name":"payments-api","namespace":"` + ns + `","scale":5}`
	root, card := s.ask("kube", "resources_scale", args, "Scaled to 5.")
	card = s.waitCardText(card, "replicas: 2 → 5")

	c.Kubectl(t, "-n", ns, "scale", "deployment", "payments-api", "--replicas=4")
	s.click(card, "approve")
	fresh := s.waitCard(root, card.TS)
	fresh = s.waitCardText(fresh, "changed since it was approved", "replicas: 4 → 5")
	s.waitCardText(card, "Stale")
	if got := jsonpath(t, c, ns, ".spec.replicas"); got != "4" {
		t.Fatalf("a stale approval ran: spec.replicas = %s, want 4", got)
	}
	if n := len(s.audit(root, core.AuditStale)); n != 1 {
		t.Errorf("%d stale entries in the audit, want 1", n)
	}
	if n := len(s.audit(root, core.AuditExecuted)); n != 0 {
		t.Errorf("%d executed entries before the fresh approval, want 0", n)
	}

	s.click(fresh, "approve")
	s.waitFinal(root, "Scaled to 5.")
	replicasAre(t, c, ns, "5")
	if n := len(s.audit(root, core.AuditExecuted)); n != 1 {
		t.Errorf("%d executed entries, want 1", n)
	}
}

// Issue 23, item 6: mcp-server-kubernetes' kubectl_patch is previewed with
// a server-side dry-run (the live object is untouched); an invalid patch
// shows the API server's validation error on the card instead of a diff.
func TestKubectlPatchCardShowsServerDryRun(t *testing.T) {
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "payments")
	deployment(t, c, ns, 3, "registry.example/payments-api:1.4.2", "info")
	s := newStack(t, nil, kubeServer(t, c, kubetest.MCPServerKubernetes, "kubectl"))
	patch := func(replicas int) string {
		return `{"resourceType":"deployment","name":"payments-api","namespace":"` + ns +
			`","patchType":"merge","patchData":{"spec":{"replicas":` + itoa(replicas) + `}}}`
	}
	root, card := s.ask("kubectl", "kubectl_patch", patch(7), "Left at 3.")
	posted := time.Now()
	card = s.waitCardText(card, "server-side dry-run", "-  replicas: 3", "+  replicas: 7")
	t.Logf("the preview came %s after the card (two kubectl runs through the server)", time.Since(posted).Round(time.Millisecond))
	t.Logf("the card:\n%s", card.Plain())
	if got := jsonpath(t, c, ns, ".spec.replicas"); got != "3" {
		t.Errorf("the dry-run changed the live object: spec.replicas = %s", got)
	}
	s.click(card, "deny")
	s.waitFinal(root, "Left at 3.")

	root, card = s.ask("kubectl", "kubectl_patch", patch(-5), "Not patched.")
	card = s.waitCardText(card, "refuses this change", "Invalid value: -5: must be greater than or equal to 0")
	t.Logf("the card:\n%s", card.Plain())
	if lines := diffLines(card.Plain()); len(lines) != 0 {
		t.Errorf("a refused dry-run shows a diff: %q", lines)
	}
	s.click(card, "deny")
	s.waitFinal(root, "Not patched.")

	// kubectl_scale is dry-run as the patch it amounts to.
	root, card = s.ask("kubectl", "kubectl_scale", `{"name":"payments-api","namespace":"`+ns+`","replicas":4}`, "Left at 3 again.")
	card = s.waitCardText(card, "replicas: 3 → 4 (server-side dry-run)", "-  replicas: 3", "+  replicas: 4")
	s.click(card, "deny")
	s.waitFinal(root, "Left at 3 again.")
	if got := jsonpath(t, c, ns, ".spec.replicas"); got != "3" {
		t.Errorf("spec.replicas = %s, want 3", got)
	}
}

var _ = context.Background
