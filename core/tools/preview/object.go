package preview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// object is a Kubernetes object decoded from JSON or YAML.
type object = map[string]any

// parseObject decodes one Kubernetes object from YAML or JSON text. The
// YAML is decoded with yaml.v3, which the config already links, and then
// passed through JSON, so that numbers and maps have the types the API
// server's JSON has (float64, map[string]any) whichever form came in.
func parseObject(text string) (object, error) {
	var v any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	js, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	var o object
	if err := json.Unmarshal(js, &o); err != nil || o == nil {
		return nil, fmt.Errorf("not a Kubernetes object: %s", oneLine(text, 120))
	}
	return o, nil
}

// splitDocuments splits a YAML stream at its "---" lines.
func splitDocuments(text string) []string {
	var docs []string
	var cur []string
	flush := func() {
		if d := strings.TrimSpace(strings.Join(cur, "\n")); d != "" {
			docs = append(docs, d)
		}
		cur = nil
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimRight(l, " \t\r") == "---" {
			flush()
			continue
		}
		cur = append(cur, l)
	}
	flush()
	return docs
}

// managedAnnotations are annotations a controller or a client writes for
// its own bookkeeping; comparing them would make every approval stale.
var managedAnnotations = []string{
	"kubectl.kubernetes.io/last-applied-configuration",
	"deployment.kubernetes.io/revision",
}

// normalize returns a copy of o without what the cluster manages: status,
// metadata's managedFields, resourceVersion, uid, generation, selfLink and
// creationTimestamp (at any depth: a pod template has one), and the
// bookkeeping annotations. What is left is what a person changes.
func normalize(o object) object {
	c, _ := deepCopy(o).(object)
	if c == nil {
		return nil
	}
	delete(c, "status")
	if md, ok := c["metadata"].(object); ok {
		for _, k := range []string{"managedFields", "resourceVersion", "uid", "generation", "selfLink"} {
			delete(md, k)
		}
		if an, ok := md["annotations"].(object); ok {
			for _, k := range managedAnnotations {
				delete(an, k)
			}
			if len(an) == 0 {
				delete(md, "annotations")
			}
		}
	}
	dropKey(c, "creationTimestamp")
	return c
}

func dropKey(v any, key string) {
	switch x := v.(type) {
	case object:
		delete(x, key)
		for _, e := range x {
			dropKey(e, key)
		}
	case []any:
		for _, e := range x {
			dropKey(e, key)
		}
	}
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case object:
		c := make(object, len(x))
		for k, e := range x {
			c[k] = deepCopy(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = deepCopy(e)
		}
		return c
	default:
		return v
	}
}

// project keeps of live only what want mentions: the fields of want's
// maps, and of lists the elements matching want's (by "name" when the
// elements have one, else by position). Diffing project(live, want)
// against want shows what applying want changes, without the defaults the
// API server filled in that want never mentions.
func project(live, want any) (any, bool) {
	switch w := want.(type) {
	case object:
		l, ok := live.(object)
		if !ok {
			return live, live != nil
		}
		out := object{}
		for k, wv := range w {
			lv, ok := l[k]
			if !ok {
				continue
			}
			if pv, ok := project(lv, wv); ok {
				out[k] = pv
			}
		}
		return out, true
	case []any:
		l, ok := live.([]any)
		if !ok {
			return live, live != nil
		}
		var out []any
		for i, wv := range w {
			lv, ok := matching(l, wv, i)
			if !ok {
				continue
			}
			if pv, ok := project(lv, wv); ok {
				out = append(out, pv)
			}
		}
		return out, true
	default:
		return live, live != nil
	}
}

// matching finds the element of list that want (the i-th wanted element)
// stands for: the one with its name, or the i-th.
func matching(list []any, want any, i int) (any, bool) {
	if w, ok := want.(object); ok {
		if name, ok := w["name"].(string); ok {
			for _, e := range list {
				if eo, ok := e.(object); ok && eo["name"] == name {
					return e, true
				}
			}
			return nil, false
		}
	}
	if i < len(list) {
		return list[i], true
	}
	return nil, false
}

// toYAML renders v as YAML with sorted keys, the form diffs compare.
func toYAML(v any) string {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// ident is "Deployment payments/payments-api".
func ident(o object) string {
	kind, _ := o["kind"].(string)
	md, _ := o["metadata"].(object)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	if ns != "" {
		name = ns + "/" + name
	}
	return strings.TrimSpace(kind + " " + name)
}

// field is the value at a dotted path of o ("spec.replicas"), nil when
// absent.
func field(o object, path string) any {
	var cur any = o
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(object)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// scalar renders a field's value for a card: numbers without ".0",
// absent as "unset".
func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "unset"
	case float64:
		if x == float64(int64(x)) {
			return fmt.Sprint(int64(x))
		}
		return fmt.Sprint(x)
	case string:
		return x
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// age is how long ago the object was created, as "3d4h", "2h5m", "40s".
func age(o object, now time.Time) string {
	ts, _ := field(o, "metadata.creationTimestamp").(string)
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return "unknown"
	}
	d := now.Sub(t).Round(time.Second)
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
	case d >= time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	}
}

// owner names the object's controlling owner, "none" without one.
func owner(o object) string {
	refs, _ := field(o, "metadata.ownerReferences").([]any)
	var names []string
	for _, r := range refs {
		ro, _ := r.(object)
		kind, _ := ro["kind"].(string)
		name, _ := ro["name"].(string)
		names = append(names, kind+" "+name)
	}
	if len(names) == 0 {
		return "none"
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// changedPaths lists the leaf paths where a and b differ, list elements
// named by their "name" when they have one: "spec.template.spec.
// containers[api].image".
func changedPaths(a, b any, path string, out *[]string) {
	ao, aok := a.(object)
	bo, bok := b.(object)
	if aok && bok {
		keys := map[string]bool{}
		for k := range ao {
			keys[k] = true
		}
		for k := range bo {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			changedPaths(ao[k], bo[k], join(path, k), out)
		}
		return
	}
	al, alok := a.([]any)
	bl, blok := b.([]any)
	if alok && blok {
		for i, bv := range bl {
			av, ok := matching(al, bv, i)
			if !ok {
				*out = append(*out, path+"["+elemName(bv, i)+"] (new)")
				continue
			}
			changedPaths(av, bv, path+"["+elemName(bv, i)+"]", out)
		}
		return
	}
	if toYAML(a) != toYAML(b) {
		*out = append(*out, path)
	}
}

func elemName(v any, i int) string {
	if o, ok := v.(object); ok {
		if n, ok := o["name"].(string); ok {
			return n
		}
	}
	return fmt.Sprint(i)
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
