#!/usr/bin/env bash
# Builds the Kubernetes control plane opsgate's tests start (internal/kubetest,
# docs/design.md §9) and installs the MCP servers they connect to:
#
#   <cache>/bin/{etcd,kube-apiserver,kube-controller-manager,kubectl}
#   <cache>/npm/node_modules/{kubernetes-mcp-server,mcp-server-kubernetes,argocd-mcp,...}
#
# <cache> is $OPSGATE_KUBE_CACHE, default ~/.cache/opsgate/kube-v1.37.2.
# Everything is pinned: the Go modules next to this script (controlplane/,
# etcd/) with their go.sum, the npm packages at exact versions (mcp.sh).
# A first run takes about 15 minutes on 2 cores (25 on a busy machine) and
# grows the Go build cache by about 6 GB; with a warm build cache it takes
# about 20 s plus the npm install; a run with everything in place returns
# at once (a stamp per part records what it was built from).
#
# Usage: deployments/kube/build.sh [--bin-only|--npm-only]
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
cache="${OPSGATE_KUBE_CACHE:-$HOME/.cache/opsgate/kube-v1.37.2}"
bin="$cache/bin"

k8s_version=v1.37.2
k8s_major=1
k8s_minor=37

want_bin=1 want_npm=1
case "${1:-}" in
--bin-only) want_npm=0 ;;
--npm-only) want_bin=0 ;;
"") ;;
*) echo "usage: $0 [--bin-only|--npm-only]" >&2; exit 2 ;;
esac

# What a part was built from: its pinned module files, the flags and the Go
# version. A change to any of them rebuilds the part.
ldflags=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $p.gitVersion=$k8s_version -X $p.gitMajor=$k8s_major -X $p.gitMinor=$k8s_minor"
	ldflags+=" -X $p.gitTreeState=clean"
done
ldflags="-s -w$ldflags"

fresh() { # stamp-name want-hash binaries...
	local name="$1" hash="$2" b
	shift 2
	[ "$(cat "$bin/.$name.stamp" 2>/dev/null)" = "$hash" ] || return 1
	for b in "$@"; do [ -x "$bin/$b" ] || return 1; done
}

# go build into a directory next to bin/, then rename into place, so an
# interrupted build never leaves a half-written binary that looks built.
build() { # stamp-name module-dir ldflags name=package...
	local name="$1" mod="$2" flags="$3" hash tmp start pair outs=() pkgs=()
	shift 3
	for pair in "$@"; do
		outs+=("${pair%%=*}")
		pkgs+=("${pair#*=}")
	done
	# go.mod without its comments: rewording one rebuilds nothing.
	hash="$( { sed -e 's://.*$::' -e '/^[[:space:]]*$/d' "$here/$mod/go.mod"; cat "$here/$mod/go.sum"; echo "$flags"; go env GOVERSION; } | sha256sum | cut -d' ' -f1)"
	if fresh "$name" "$hash" "${outs[@]}"; then
		return 0
	fi
	echo "kube: building ${outs[*]} (a first build takes minutes)"
	start=$SECONDS
	tmp="$(mktemp -d "$cache/.build.XXXXXX")"
	local i
	for i in "${!outs[@]}"; do
		(
			cd "$here/$mod"
			GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false" \
				go build -trimpath -ldflags "$flags" -o "$tmp/${outs[$i]}" "${pkgs[$i]}"
		) || { rm -rf "$tmp"; return 1; }
		echo "kube:   ${outs[$i]} after $((SECONDS - start)) s"
	done
	for i in "${outs[@]}"; do mv -f "$tmp/$i" "$bin/$i"; done
	rm -rf "$tmp"
	echo "$hash" >"$bin/.$name.stamp"
	echo "kube: built ${outs[*]} in $((SECONDS - start)) s"
}

mkdir -p "$bin"
# One build at a time per cache: a second run waits for the first, then
# finds everything fresh.
exec 9>"$cache/.lock"
if command -v flock >/dev/null; then flock 9; fi
# What an interrupted build left behind.
rm -rf "$cache"/.build.*

if [ "$want_bin" = 1 ]; then
	build etcd etcd "-s -w" etcd=go.etcd.io/etcd/server/v3
	build kubernetes controlplane "$ldflags" \
		kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver \
		kube-controller-manager=k8s.io/kubernetes/cmd/kube-controller-manager \
		kubectl=k8s.io/kubernetes/cmd/kubectl
fi
if [ "$want_npm" = 1 ]; then
	OPSGATE_KUBE_CACHE="$cache" bash "$here/mcp.sh"
fi
