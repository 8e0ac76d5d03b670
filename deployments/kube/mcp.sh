#!/usr/bin/env bash
# Installs the MCP servers opsgate's tests connect to (internal/kubetest,
# docs/design.md §9) into <cache>/npm, exactly as pinned by npm/package.json
# and npm/package-lock.json next to this script (exact versions, and the lock
# file pins every transitive version and its integrity hash):
#   kubernetes-mcp-server 0.0.67, mcp-server-kubernetes 4.1.7, argocd-mcp 0.9.0,
#   @modelcontextprotocol/server-filesystem 2026.8.31.
# <cache> is $OPSGATE_KUBE_CACHE, default ~/.cache/opsgate/kube-v1.37.2. A
# run with the same lock file already installed returns at once.
# build.sh runs it; on its own: deployments/kube/mcp.sh
#
# To change a version: edit npm/package.json, run `npm install
# --package-lock-only --ignore-scripts` in npm/, commit both files.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
cache="${OPSGATE_KUBE_CACHE:-$HOME/.cache/opsgate/kube-v1.37.2}"
npmdir="$cache/npm"

hash="$(cat "$here/npm/package.json" "$here/npm/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$npmdir/.stamp" 2>/dev/null)" = "$hash" ] && [ -d "$npmdir/node_modules" ]; then
	exit 0
fi
command -v npm >/dev/null || { echo "kube: npm not found; install Node.js 20 or newer" >&2; exit 1; }
echo "kube: installing the MCP servers into $npmdir"
start=$SECONDS
mkdir -p "$npmdir"
rm -f "$npmdir/.stamp"
cp "$here/npm/package.json" "$here/npm/package-lock.json" "$npmdir/"
# No install scripts: none of these packages needs one (kubernetes-mcp-server
# ships its Go binary as an optional dependency per platform).
# npm install rather than npm ci: npm records only this platform's binary
# package of kubernetes-mcp-server in the lock file, which npm ci rejects as
# out of sync; install keeps every locked version all the same.
npm install --prefix "$npmdir" --no-save --ignore-scripts --no-audit --no-fund --loglevel=error
echo "$hash" >"$npmdir/.stamp"
echo "kube: MCP servers installed in $((SECONDS - start)) s"
