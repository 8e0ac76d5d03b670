package preview

import (
	"context"
	"fmt"
	"strings"

	"github.com/opsgate/opsgate/core"
)

// Previews of server-filesystem's tools (docs/design.md §18): the current
// file comes from read_text_file; edit_file has its own dryRun.

// readFile reads a file's text; absent when it does not exist.
func readFile(ctx context.Context, r reader, path string) (text string, absent bool, err error) {
	res, err := r.read(ctx, "read_text_file", map[string]any{"path": path}, false)
	if err != nil {
		return "", false, err
	}
	if res.IsError {
		if strings.Contains(res.Content, "ENOENT") || strings.Contains(strings.ToLower(res.Content), "no such file") {
			return "", true, nil
		}
		return "", false, fmt.Errorf("reading %s failed: %s", path, oneLine(res.Content, 300))
	}
	return res.Content, false, nil
}

func fsWriteFile(ctx context.Context, r reader, args map[string]any) (core.Preview, error) {
	path, content := str(args, "path"), str(args, "content")
	cur, absent, err := readFile(ctx, r, path)
	if err != nil {
		return core.Preview{}, err
	}
	if absent {
		lines := splitLines(content)
		diff := make([]string, len(lines))
		for i, l := range lines {
			diff[i] = "+" + l
		}
		return core.Preview{Summary: fmt.Sprintf("new file, %d lines", len(lines)), Diff: strings.Join(diff, "\n"),
			Hash: hashOf(path, "absent")}, nil
	}
	p := core.Preview{Hash: hashOf(path, cur)}
	body := unified(cur, content)
	if body == "" {
		p.Summary = path + ": no change"
		return p, nil
	}
	p.Diff = "--- " + path + "\n+++ " + path + "\n" + body
	p.Summary = path + ": " + lineCounts(p.Diff)
	return p, nil
}

// lineCounts is "1 line removed, 2 added".
func lineCounts(diff string) string {
	rm, add := changedLines(diff)
	s := fmt.Sprintf("%d lines removed, %d added", rm, add)
	if rm == 1 {
		s = fmt.Sprintf("1 line removed, %d added", add)
	}
	return s
}

func fsEditFile(ctx context.Context, r reader, args map[string]any) (core.Preview, error) {
	path := str(args, "path")
	cur, absent, err := readFile(ctx, r, path)
	if err != nil {
		return core.Preview{}, err
	}
	if absent {
		return core.Preview{Summary: path + " does not exist: the edit would fail", Hash: hashOf(path, "absent")}, nil
	}
	dry := map[string]any{"path": path, "edits": args["edits"], "dryRun": true}
	res, err := r.read(ctx, "edit_file", dry, true)
	if err != nil {
		return core.Preview{}, err
	}
	p := core.Preview{Hash: hashOf(path, cur)}
	if res.IsError {
		p.Summary = path + ": the edit would fail"
		p.Why = oneLine(res.Content, 500)
		return p, nil
	}
	p.Diff = unfence(res.Content)
	p.Summary = path + ": " + lineCounts(p.Diff)
	return p, nil
}

// unfence is the body of the first ``` code block of text, or text.
func unfence(text string) string {
	lines := splitLines(text)
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			if start < 0 {
				start = i
				continue
			}
			return strings.Join(lines[start+1:i], "\n")
		}
	}
	return strings.TrimSpace(text)
}

func fsMoveFile(ctx context.Context, r reader, args map[string]any) (core.Preview, error) {
	src, dst := str(args, "source"), str(args, "destination")
	exists := func(path string) (bool, error) {
		res, err := r.read(ctx, "get_file_info", map[string]any{"path": path}, false)
		if err != nil {
			return false, err
		}
		if res.IsError {
			if strings.Contains(res.Content, "ENOENT") || strings.Contains(strings.ToLower(res.Content), "no such file") {
				return false, nil
			}
			return false, fmt.Errorf("reading %s failed: %s", path, oneLine(res.Content, 300))
		}
		return true, nil
	}
	srcOK, err := exists(src)
	if err != nil {
		return core.Preview{}, err
	}
	dstOK, err := exists(dst)
	if err != nil {
		return core.Preview{}, err
	}
	s := src + " → " + dst
	switch {
	case !srcOK:
		s += " (the source does not exist: the move would fail)"
	case dstOK:
		s += " (the destination exists: the move would fail)"
	default:
		s += " (the destination does not exist)"
	}
	return core.Preview{Summary: s, Diff: "-" + src + "\n+" + dst,
		Hash: hashOf(src, fmt.Sprint(srcOK), dst, fmt.Sprint(dstOK))}, nil
}
