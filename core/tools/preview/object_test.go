package preview

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const liveDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: payments-api
  namespace: payments
  uid: 1b1c
  resourceVersion: "4711"
  generation: 3
  creationTimestamp: "2026-11-28T01:00:00Z"
  annotations:
    deployment.kubernetes.io/revision: "3"
  managedFields:
  - manager: kubectl
spec:
  replicas: 4
  progressDeadlineSeconds: 600
  selector: {matchLabels: {app: payments-api}}
  template:
    metadata:
      creationTimestamp: null
      labels: {app: payments-api}
    spec:
      dnsPolicy: ClusterFirst
      containers:
      - name: api
        image: registry.example/payments-api:1.4.2
        imagePullPolicy: IfNotPresent
        terminationMessagePath: /dev/termination-log
        env:
        - {name: LOG_LEVEL, value: info}
        - {name: POOL_SIZE, value: "20"}
status:
  replicas: 4
  readyReplicas: 0
`

const manifest = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: payments-api
  namespace: payments
spec:
  replicas: 4
  selector: {matchLabels: {app: payments-api}}
  template:
    metadata:
      labels: {app: payments-api}
    spec:
      containers:
      - name: api
        image: registry.example/payments-api:1.5.0
        env:
        - {name: LOG_LEVEL, value: debug}
        - {name: POOL_SIZE, value: "20"}
`

// The diff of a live object against a manifest shows exactly what the
// manifest changes: not the fields the cluster manages, and not the
// defaults the manifest never mentions.
func TestObjectDiffShowsOnlyWhatChanges(t *testing.T) {
	live, err := parseObject(liveDeployment)
	if err != nil {
		t.Fatal(err)
	}
	want, err := parseObject(manifest)
	if err != nil {
		t.Fatal(err)
	}
	seen, _ := project(normalize(live), normalize(want))
	diff := compact(toYAML(seen), toYAML(normalize(want)))
	var changed []string
	for _, l := range splitLines(diff) {
		if strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+") {
			changed = append(changed, l)
		}
	}
	wantLines := []string{
		"-              value: info",
		"+              value: debug",
		"-          image: registry.example/payments-api:1.4.2",
		"+          image: registry.example/payments-api:1.5.0",
	}
	if d := cmp.Diff(sortLines(wantLines), sortLines(changed)); d != "" {
		t.Errorf("changed lines (-want +got):\n%s\nwhole diff:\n%s", d, diff)
	}
	for _, noise := range []string{"uid", "resourceVersion", "managedFields", "generation", "creationTimestamp", "status", "imagePullPolicy", "dnsPolicy", "revision"} {
		if strings.Contains(diff, noise) {
			t.Errorf("the diff shows %s:\n%s", noise, diff)
		}
	}
	var paths []string
	changedPaths(seen, normalize(want), "", &paths)
	if diff := cmp.Diff([]string{"spec.template.spec.containers[api].env[LOG_LEVEL].value", "spec.template.spec.containers[api].image"}, paths); diff != "" {
		t.Errorf("changed paths (-want +got):\n%s", diff)
	}
}

func sortLines(ls []string) []string {
	out := slices.Clone(ls)
	slices.Sort(out)
	return out
}

func TestNormalizeKeepsWhatPeopleChange(t *testing.T) {
	live, err := parseObject(liveDeployment)
	if err != nil {
		t.Fatal(err)
	}
	n := normalize(live)
	if n["status"] != nil || field(n, "metadata.uid") != nil || field(n, "metadata.annotations") != nil ||
		field(n, "spec.template.metadata.creationTimestamp") != nil {
		t.Errorf("normalize kept a managed field:\n%s", toYAML(n))
	}
	if scalar(field(n, "spec.replicas")) != "4" || field(live, "status") == nil {
		t.Errorf("normalize lost spec.replicas, or changed its input")
	}
	// A status update by a controller changes nothing a preview compares.
	live2, _ := parseObject(strings.Replace(liveDeployment, "readyReplicas: 0", "readyReplicas: 3", 1))
	if toYAML(normalize(live2)) != toYAML(n) {
		t.Errorf("a status change made the normalized object differ")
	}
}

func TestDeletionFacts(t *testing.T) {
	live, _ := parseObject(liveDeployment)
	now, _ := time.Parse(time.RFC3339, "2026-11-28T04:02:05Z")
	if got := age(live, now); got != "3h2m" {
		t.Errorf("age = %q, want 3h2m", got)
	}
	if got := owner(live); got != "none" {
		t.Errorf("owner = %q, want none", got)
	}
	pod, _ := parseObject("kind: Pod\nmetadata:\n  name: p\n  ownerReferences:\n  - {kind: ReplicaSet, name: payments-api-5d9}\n")
	if got := owner(pod); got != "ReplicaSet payments-api-5d9" {
		t.Errorf("owner = %q", got)
	}
}

func TestSplitDocuments(t *testing.T) {
	docs := splitDocuments("---\na: 1\n---\n\n---\nb: 2\n")
	if diff := cmp.Diff([]string{"a: 1", "b: 2"}, docs); diff != "" {
		t.Errorf("splitDocuments (-want +got):\n%s", diff)
	}
}
