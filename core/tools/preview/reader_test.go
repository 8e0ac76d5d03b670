package preview_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/core/tools/preview"
)

// A preview never calls a tool that is not a read: a recipe naming a
// write tool as its read fails with no preview, and the write tool is
// never called (the hang server would answer set_size at once).
func TestPreviewRefusesToReadWithAWriteTool(t *testing.T) {
	host, err := tools.New([]tools.ServerConfig{hangServer(t, "pool")}, tools.WithLogger(coretest.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := host.Tools(ctx, "pool")
	if err != nil {
		t.Fatal(err)
	}
	var set core.Tool
	for _, tl := range list {
		if tl.Remote == "set_size" {
			set = tl
		}
	}
	p := preview.New(host, map[string][]preview.Recipe{"pool": {{Tool: "set_size", Read: "set_size", Field: "size", Value: "size"}}})
	if !p.Previews(set) {
		t.Fatal("a tool with a recipe has no preview")
	}
	_, err = p.Preview(ctx, set, []byte(`{"pool":"blue","size":3}`))
	if err == nil || !strings.Contains(err.Error(), "set_size is not a read tool") {
		t.Errorf("Preview with a write tool as its read: %v, want it refused", err)
	}
	// A server without a built-in preview and no recipe says how to add one.
	_, err = preview.New(host, nil).Preview(ctx, set, []byte(`{"pool":"blue","size":3}`))
	if err == nil || !strings.Contains(err.Error(), `(server "hang-server") has no built-in preview`) {
		t.Errorf("Preview without a recipe: %v", err)
	}
}
