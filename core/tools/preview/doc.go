// Package preview works out what an approval's tool call would change
// before anyone decides (docs/design.md §18): it implements core.Previewer
// over a core/tools Host.
//
// A preview only reads. It calls tools whose risk is read, or a dry-run the
// server documents (server-filesystem's edit_file dryRun, kubectl
// --dry-run=server through mcp-server-kubernetes' kubectl_generic), never
// the call itself. Built-in previews are recognised by the name a server
// gives in its serverInfo, so they work whatever the operator named the
// toolset:
//
//   - kubernetes-mcp-server: resources_create_or_update (the live object
//     against the manifest, or "new object"), resources_scale
//     ("replicas: 2 → 3"), resources_delete and pods_delete (what goes),
//     pods_exec and pods_run (the command or image).
//   - kubernetes (mcp-server-kubernetes): kubectl_scale, kubectl_patch,
//     kubectl_apply and kubectl_rollout, through a server-side dry-run
//     where kubectl has one; the API server's refusal of a dry-run is the
//     preview.
//   - secure-filesystem-server: write_file (a unified diff, or "new file,
//     N lines"), edit_file (the server's own dryRun diff), move_file.
//
// Any other server gets previews from recipes in its configuration
// (tools.servers[].previews): a read tool, how its arguments come from the
// call's, and which field of its result the call changes.
//
// Every preview carries a hash of what it compared (core.Preview.Hash): the
// engine works the preview out again right before an approved call runs,
// and a different hash means the approver saw something that is no longer
// true. Kubernetes objects are compared without the fields the cluster
// manages (status, managedFields, resourceVersion, uid, generation,
// timestamps), so a controller updating status never makes an approval
// stale.
package preview
