package tools

import (
	"fmt"
	"time"

	"github.com/opsgate/opsgate/core"
)

// timedOut is the result of a call cancelled at its time limit. It starts
// with "timed out after" (the engine puts it in the tool.error event and
// the audit entry as it is) and names the setting that set the limit. A
// tool that may change things could have done so before the cancel
// reached the server: the model and the user are told the outcome is
// unknown, so that nobody blindly runs it twice.
func timedOut(tool core.Tool, limit time.Duration, source string) core.ToolResult {
	head := fmt.Sprintf("timed out after %s (%s) and was cancelled", limit, source)
	if tool.Risk.NeedsApproval() {
		return core.ToolResult{IsError: true, Content: head +
			"; outcome unknown: check before retrying, the server may have made the change before the cancel reached it."}
	}
	return core.ToolResult{IsError: true, Content: head + fmt.Sprintf(
		"; %s returned nothing. The server is still available: try a narrower request or another tool.", tool.Name)}
}
