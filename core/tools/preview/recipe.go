package preview

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/opsgate/opsgate/core"
)

// Recipe previews the calls of one tool of a server without a built-in
// preview (tools.servers[].previews, docs/design.md §18): it calls Read,
// a read tool of the same server, with arguments taken from the call's
// (Args: the read tool's argument → the call's argument), and shows Field
// of its JSON result as it is and as the call's Value argument would set
// it.
type Recipe struct {
	Tool  string
	Read  string
	Args  map[string]string
	Field string
	Value string
}

func (rc Recipe) preview(ctx context.Context, r reader, args map[string]any) (core.Preview, error) {
	readArgs := map[string]any{}
	for to, from := range rc.Args {
		if v, ok := args[from]; ok {
			readArgs[to] = v
		}
	}
	res, err := r.read(ctx, rc.Read, readArgs, false)
	if err != nil {
		return core.Preview{}, err
	}
	if res.IsError {
		return core.Preview{}, fmt.Errorf("%s failed: %s", rc.Read, oneLine(res.Content, 300))
	}
	var doc any
	if err := json.Unmarshal([]byte(strings.TrimSpace(res.Content)), &doc); err != nil {
		return core.Preview{}, fmt.Errorf("%s did not answer JSON, so %s cannot be read from it", rc.Read, rc.Field)
	}
	o, _ := doc.(map[string]any)
	cur := scalar(field(o, rc.Field))
	p := core.Preview{Status: core.PreviewReady, Hash: hashOf(rc.Read, rc.Field, cur)}
	want, ok := args[rc.Value]
	if rc.Value == "" || !ok {
		p.Summary = rc.Field + " is " + cur
		return p, nil
	}
	p.Summary = rc.Field + ": " + cur + " → " + scalar(want)
	p.Diff = "-" + rc.Field + ": " + cur + "\n+" + rc.Field + ": " + scalar(want)
	return p, nil
}
