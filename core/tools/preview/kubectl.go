package preview

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/opsgate/opsgate/core"
)

// Previews of mcp-server-kubernetes' tools (docs/design.md §18). Its own
// dryRun flags are client-side only; kubectl_generic with
// --dry-run=server reaches the API server, which validates and defaults
// the change without storing it. The live object comes from kubectl_get.

func kubectlGet(r reader, resourceType, name, namespace string) getter {
	return func(ctx context.Context) (object, bool, error) {
		args := map[string]any{"resourceType": resourceType, "name": name, "output": "json"}
		if namespace != "" {
			args["namespace"] = namespace
		}
		res, err := r.read(ctx, "kubectl_get", args, false)
		if err != nil {
			return nil, false, err
		}
		return liveObject(res)
	}
}

func resourceType(args map[string]any, fallback string) string {
	if t := str(args, "resourceType"); t != "" {
		return t
	}
	return fallback
}

func kubectlScale(ctx context.Context, r reader, args map[string]any) (core.Preview, error) {
	// kubectl scale --dry-run=server echoes the object unscaled, so the
	// scale is dry-run as the patch it amounts to: the API server still
	// validates it (a negative count is refused on the card).
	rt, name, ns := resourceType(args, "deployment"), str(args, "name"), str(args, "namespace")
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"replicas": args["replicas"]}})
	if err != nil {
		return core.Preview{}, err
	}
	gen := map[string]any{"command": "patch", "resourceType": rt, "name": name,
		"flags": map[string]any{"type": "merge", "patch": string(patch)}}
	if ns != "" {
		gen["namespace"] = ns
	}
	p, before, after, err := dryRunObjects(ctx, r, kubectlGet(r, rt, name, ns), gen)
	if err != nil || before == nil || after == nil {
		return p, err
	}
	p.Summary = "replicas: " + scalar(field(before, "spec.replicas")) + " → " + scalar(field(after, "spec.replicas")) + " (server-side dry-run)"
	return p, nil
}

// dryRun runs kubectl_generic with --dry-run=server and -o json and
// compares the object it returns with the live one. A refusal (the API
// server's validation error) is the preview, with the live object's hash.
func dryRun(ctx context.Context, r reader, get getter, args map[string]any) (core.Preview, error) {
	p, _, _, err := dryRunObjects(ctx, r, get, args)
	return p, err
}

// dryRunObjects is dryRun that also returns the normalized objects it
// compared: before is nil when the object does not exist, after when the
// API server refused the change or answered no object.
func dryRunObjects(ctx context.Context, r reader, get getter, args map[string]any) (_ core.Preview, before, after object, _ error) {
	live, absent, err := get(ctx)
	if err != nil {
		return core.Preview{}, nil, nil, err
	}
	if absent {
		return core.Preview{Summary: "does not exist: the change would fail", Hash: hashOf("absent")}, nil, nil, nil
	}
	before = normalize(live)
	id := ident(before)
	hash := hashOf(id, toYAML(before))
	flags, _ := args["flags"].(map[string]any)
	if flags == nil {
		flags = map[string]any{}
		args["flags"] = flags
	}
	flags["dry-run"] = "server"
	args["outputFormat"] = "json"
	res, err := r.read(ctx, "kubectl_generic", args, true)
	if err != nil {
		return core.Preview{}, nil, nil, err
	}
	if res.IsError {
		return core.Preview{Summary: id + ": the API server refuses this change (server-side dry-run)",
			Why: refusal(res.Content), Hash: hash}, before, nil, nil
	}
	answer, err := parseObject(res.Content)
	if err != nil {
		return core.Preview{Summary: id + ": dry-run: " + oneLine(res.Content, 200), Hash: hash}, before, nil, nil
	}
	after = normalize(answer)
	p := core.Preview{Hash: hash, Diff: compact(toYAML(before), toYAML(after))}
	var paths []string
	changedPaths(before, after, "", &paths)
	if p.Diff == "" {
		p.Summary = id + ": no change (server-side dry-run)"
	} else {
		p.Summary = id + ": " + describePaths(paths) + " (server-side dry-run)"
	}
	return p, before, after, nil
}

// refusal picks from kubectl's failure what the API server said.
func refusal(text string) string {
	var keep []string
	for _, l := range splitLines(text) {
		l = strings.TrimSpace(l)
		if strings.Contains(l, "is invalid") || strings.HasPrefix(l, "Error from server") || strings.HasPrefix(l, "error:") {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		lines := splitLines(strings.TrimSpace(text))
		if len(lines) == 0 {
			return "the dry-run failed"
		}
		keep = lines[len(lines)-1:]
	}
	return strings.Join(keep, "\n")
}

func kubectlPatch(ctx context.Context, r reader, args map[string]any) (core.Preview, error) {
	if _, ok := args["patchData"]; !ok {
		return core.Preview{}, fmt.Errorf("the patch is in a file on the server (patchFile), which a preview does not read")
	}
	patch, err := json.Marshal(args["patchData"])
	if err != nil {
		return core.Preview{}, err
	}
	typ := str(args, "patchType")
	if typ == "" {
		typ = "strategic"
	}
	rt, name, ns := str(args, "resourceType"), str(args, "name"), str(args, "namespace")
	gen := map[string]any{"command": "patch", "resourceType": rt, "name": name,
		"flags": map[string]any{"type": typ, "patch": string(patch)}}
	if ns != "" {
		gen["namespace"] = ns
	}
	return dryRun(ctx, r, kubectlGet(r, rt, name, ns), gen)
}

func kubectlApply(ctx context.Context, r reader, args map[string]any) (core.Preview, error) {
	docs := splitDocuments(str(args, "manifest"))
	if len(docs) == 0 {
		return core.Preview{}, fmt.Errorf("the manifest is in a file on the server (filename), which a preview does not read")
	}
	want, err := parseObject(docs[0])
	if err != nil {
		return core.Preview{}, err
	}
	kind, _ := want["kind"].(string)
	name, _ := field(want, "metadata.name").(string)
	ns, _ := field(want, "metadata.namespace").(string)
	if ns == "" {
		ns = str(args, "namespace")
	}
	if kind == "" || name == "" {
		return core.Preview{}, fmt.Errorf("the manifest needs kind and metadata.name")
	}
	p, err := diffObject(ctx, kubectlGet(r, strings.ToLower(kind), name, ns), want)
	if err == nil && len(docs) > 1 {
		p.Summary += fmt.Sprintf(" (and %d more objects, not previewed)", len(docs)-1)
	}
	return p, err
}

func kubectlRollout(ctx context.Context, r reader, args map[string]any) (core.Preview, error) {
	sub := str(args, "subCommand")
	rt, name, ns := resourceType(args, "deployment"), str(args, "name"), str(args, "namespace")
	switch sub {
	case "", "status", "history":
		return core.Preview{Summary: "reads the rollout " + firstNonEmpty(sub, "status") + " of " + rt + " " + name + ": changes nothing"}, nil
	}
	gen := map[string]any{"command": "rollout", "subCommand": sub, "resourceType": rt, "name": name}
	if ns != "" {
		gen["namespace"] = ns
	}
	if rev, ok := args["revision"]; ok && sub == "undo" {
		gen["flags"] = map[string]any{"to-revision": scalar(rev)}
	}
	return dryRun(ctx, r, kubectlGet(r, rt, name, ns), gen)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
