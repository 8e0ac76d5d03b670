// Command hangserver is an MCP server over stdio whose read tool never
// answers: the preview tests' server that hangs (docs/design.md §18). Its
// write tool, set_size, answers at once; get_size, the read a recipe
// previews set_size with, blocks until the client cancels the request;
// get_pool answers at once with the pool as JSON ({"spec":{"size":2}}),
// for a recipe that works.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	s := server.NewMCPServer("hang-server", "1.0.0", server.WithToolCapabilities(false), server.WithRecovery())
	s.AddTool(mcp.NewTool("get_size", mcp.WithDescription("Reads a pool's size; never answers."),
		mcp.WithString("pool", mcp.Required()), mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false)),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	s.AddTool(mcp.NewTool("get_pool", mcp.WithDescription("Reads a pool."),
		mcp.WithString("pool", mcp.Required()), mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprintf(`{"name":%q,"spec":{"size":2}}`, req.GetString("pool", ""))), nil
		})
	s.AddTool(mcp.NewTool("set_size", mcp.WithDescription("Sets a pool's size."),
		mcp.WithString("pool", mcp.Required()), mcp.WithNumber("size", mcp.Required()),
		mcp.WithReadOnlyHintAnnotation(false), mcp.WithDestructiveHintAnnotation(false)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprint("size set to ", req.GetArguments()["size"])), nil
		})
	if err := server.ServeStdio(s); err != nil {
		log.Fatal(err)
	}
}
