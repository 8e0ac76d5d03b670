package preview

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Previews of kubernetes-mcp-server's tools (docs/design.md §18). It has
// no dry-run: the live object is read with resources_get and compared with
// what the call asks for.

// getter reads one object; absent reports that it does not exist.
type getter func(ctx context.Context) (o object, absent bool, err error)

// kmsGet reads an object with kubernetes-mcp-server's resources_get.
func kmsGet(r reader, apiVersion, kind, name, namespace string) getter {
	return func(ctx context.Context) (object, bool, error) {
		args := map[string]any{"apiVersion": apiVersion, "kind": kind, "name": name}
		if namespace != "" {
			args["namespace"] = namespace
		}
		res, err := r.read(ctx, "resources_get", args, false)
		if err != nil {
			return nil, false, err
		}
		return liveObject(res)
	}
}

// liveObject decodes a read tool's answer: the object, or absent when the
// server says it is not found.
func liveObject(res core.ToolResult) (object, bool, error) {
	if notFound(res.Content) && (res.IsError || !strings.Contains(res.Content, `"kind"`)) {
		return nil, true, nil
	}
	if res.IsError {
		return nil, false, fmt.Errorf("reading the live object failed: %s", oneLine(res.Content, 300))
	}
	o, err := parseObject(res.Content)
	if err != nil {
		return nil, false, err
	}
	if e, ok := o["error"].(string); ok && o["kind"] == nil {
		return nil, false, fmt.Errorf("reading the live object failed: %s", oneLine(e, 300))
	}
	return o, false, nil
}

func notFound(text string) bool {
	return strings.Contains(strings.ToLower(text), "not found")
}

// diffObject compares the live object (get) with want, the whole state a
// manifest asks for: only the fields want mentions are compared.
func diffObject(ctx context.Context, get getter, want object) (core.Preview, error) {
	want = normalize(want)
	id := ident(want)
	live, absent, err := get(ctx)
	if err != nil {
		return core.Preview{}, err
	}
	if absent {
		lines := splitLines(toYAML(want))
		for i, l := range lines {
			lines[i] = "+" + l
		}
		return core.Preview{Summary: "new object: " + id, Diff: strings.Join(lines, "\n"), Hash: hashOf(id, "absent")}, nil
	}
	seen, _ := project(normalize(live), want)
	before := toYAML(seen)
	p := core.Preview{Hash: hashOf(id, before), Diff: compact(before, toYAML(want))}
	var paths []string
	changedPaths(seen, want, "", &paths)
	switch {
	case p.Diff == "":
		p.Summary = id + ": no change"
	default:
		p.Summary = id + ": " + describePaths(paths)
	}
	return p, nil
}

// describePaths names up to three changed fields by their last parts.
func describePaths(paths []string) string {
	if len(paths) == 0 {
		return "changes"
	}
	short := make([]string, 0, 3)
	for _, p := range paths[:min(len(paths), 3)] {
		parts := strings.Split(p, ".")
		short = append(short, strings.Join(parts[max(len(parts)-2, 0):], "."))
	}
	s := "changes " + strings.Join(short, ", ")
	if len(paths) > 3 {
		s += fmt.Sprintf(" and %d more", len(paths)-3)
	}
	return s
}

func kmsCreateOrUpdate(ctx context.Context, r reader, args map[string]any) (core.Preview, error) {
	docs := splitDocuments(str(args, "resource"))
	if len(docs) == 0 {
		return core.Preview{}, fmt.Errorf("the resource is empty")
	}
	want, err := parseObject(docs[0])
	if err != nil {
		return core.Preview{}, err
	}
	apiVersion, _ := want["apiVersion"].(string)
	kind, _ := want["kind"].(string)
	name, _ := field(want, "metadata.name").(string)
	ns, _ := field(want, "metadata.namespace").(string)
	if apiVersion == "" || kind == "" || name == "" {
		return core.Preview{}, fmt.Errorf("the resource needs apiVersion, kind and metadata.name")
	}
	p, err := diffObject(ctx, kmsGet(r, apiVersion, kind, name, ns), want)
	if err == nil && len(docs) > 1 {
		p.Summary += fmt.Sprintf(" (and %d more objects, not previewed)", len(docs)-1)
	}
	return p, err
}

// replicaChange previews a scale: replicas now → wanted.
func replicaChange(ctx context.Context, get getter, wanted any) (core.Preview, error) {
	live, absent, err := get(ctx)
	if err != nil {
		return core.Preview{}, err
	}
	if absent {
		return core.Preview{Summary: "does not exist: nothing to scale", Hash: hashOf("absent")}, nil
	}
	id := ident(live)
	cur := scalar(field(live, "spec.replicas"))
	if wanted == nil {
		return core.Preview{Summary: id + ": reads the scale, changes nothing (replicas: " + cur + ")"}, nil
	}
	want := scalar(wanted)
	p := core.Preview{
		Summary: "replicas: " + cur + " → " + want,
		Diff:    " " + id + "\n-replicas: " + cur + "\n+replicas: " + want,
		Hash:    hashOf(id, "replicas", cur),
	}
	if cur == want {
		p.Summary = "replicas: " + cur + " (no change)"
		p.Diff = ""
	}
	return p, nil
}

func kmsScale(ctx context.Context, r reader, args map[string]any) (core.Preview, error) {
	get := kmsGet(r, str(args, "apiVersion"), str(args, "kind"), str(args, "name"), str(args, "namespace"))
	return replicaChange(ctx, get, args["scale"])
}

// deletion previews a delete: what goes.
func deletion(ctx context.Context, get getter, what string) (core.Preview, error) {
	live, absent, err := get(ctx)
	if err != nil {
		return core.Preview{}, err
	}
	if absent {
		return core.Preview{Summary: what + " does not exist: nothing to delete", Hash: hashOf(what, "absent")}, nil
	}
	kind, _ := live["kind"].(string)
	name, _ := field(live, "metadata.name").(string)
	ns, _ := field(live, "metadata.namespace").(string)
	where := kind + " " + name
	if ns != "" {
		where += " in " + ns
	}
	facts := []string{"age: " + age(live, time.Now()), "owner: " + owner(live)}
	summary := "deletes " + where
	var replicas string
	if spec := field(live, "spec.replicas"); spec != nil {
		replicas = scalar(spec) + " (" + scalar(orZero(field(live, "status.readyReplicas"))) + " ready)"
		facts = append(facts, "replicas: "+replicas)
		summary += ", replicas: " + replicas
	}
	if phase, ok := field(live, "status.phase").(string); ok {
		facts = append(facts, "phase: "+phase)
	}
	summary += ", age " + age(live, time.Now())
	diff := "-" + where
	for _, f := range facts {
		diff += "\n-  " + f
	}
	return core.Preview{Summary: summary, Diff: diff, Hash: hashOf(where, "exists", owner(live), replicaSpec(live))}, nil
}

func replicaSpec(o object) string { return scalar(field(o, "spec.replicas")) }

func orZero(v any) any {
	if v == nil {
		return float64(0)
	}
	return v
}

func kmsDelete(ctx context.Context, r reader, args map[string]any) (core.Preview, error) {
	what := str(args, "kind") + " " + str(args, "name")
	return deletion(ctx, kmsGet(r, str(args, "apiVersion"), str(args, "kind"), str(args, "name"), str(args, "namespace")), what)
}

func kmsPodDelete(ctx context.Context, r reader, args map[string]any) (core.Preview, error) {
	return deletion(ctx, kmsGet(r, "v1", "Pod", str(args, "name"), str(args, "namespace")), "Pod "+str(args, "name"))
}

func kmsPodExec(_ context.Context, _ reader, args map[string]any) (core.Preview, error) {
	var cmd []string
	if list, ok := args["command"].([]any); ok {
		for _, c := range list {
			cmd = append(cmd, fmt.Sprint(c))
		}
	}
	where := "pod " + podName(args)
	if c := str(args, "container"); c != "" {
		where += ", container " + c
	}
	return core.Preview{Summary: "runs `" + oneLine(strings.Join(cmd, " "), 200) + "` in " + where}, nil
}

func kmsPodRun(_ context.Context, _ reader, args map[string]any) (core.Preview, error) {
	name := str(args, "name")
	if name == "" {
		name = "(a random name)"
	}
	s := "starts pod " + name
	if ns := str(args, "namespace"); ns != "" {
		s += " in " + ns
	}
	s += " from image " + str(args, "image")
	if port, ok := args["port"]; ok {
		s += ", port " + scalar(port)
	}
	return core.Preview{Summary: s}, nil
}

func podName(args map[string]any) string {
	if ns := str(args, "namespace"); ns != "" {
		return ns + "/" + str(args, "name")
	}
	return str(args, "name")
}
