#!/usr/bin/env bash
# Builds the real node's Go tools (kubelet, kube-proxy, containerd v2 with its runc shim and ctr, and the
# sandbox program tools/node/pause) and the programs of the single-binary images the node runs (the bundled
# NATS server and etcd, the LeaderWorkerSet controller, local-path-provisioner; image/build.py packs them)
# from their Go modules into a cache outside the repository, then links it at .tools/node. With them, the
# custom metrics pipeline of the real node's autoscaling test: prometheus-adapter from its Go module and
# Prometheus from Debian's package (its binary only: installing the package would start a server on every
# interface).
#
# Why apart from tools/build-tools.sh: that script's cache hash covers its own inputs only, so the node's
# tools get their own cache directory keyed by the hash of this script, tools/node/pins.env, the Kubernetes
# pin in tools/pins.env and the wrapper go.mod files here. runc and the CNI plugins come from Debian
# (`make node-deps`). Same publish discipline as the core tools: each binary is built to a temporary name and
# renamed, the set is only renamed from <hash>.partial to <hash> once complete.
#
# Usage: tools/node/build-node-tools.sh [--print-dir]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../pins.env
source "$repo/tools/pins.env"
# shellcheck source=pins.env
source "$here/pins.env"

hash=$( { grep '^KUBE_VERSION=' "$repo/tools/pins.env"; cat "$here/pins.env" "$here/build-node-tools.sh" \
  "$here"/gomod/*/go.mod "$here"/pause/*; } | sha256sum | cut -c1-16)
root="${DYNAMO_NODE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dynamo-platform/node-tools}"
final="$root/$hash"
stage="$root/$hash.partial"

if [[ "${1:-}" == "--print-dir" ]]; then echo "$final"; exit 0; fi

export CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false" GOPROXY="${GOPROXY:-https://proxy.golang.org}"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
jobs="${TOOLS_BUILD_JOBS:-2}"
start=$(date +%s)

say() { printf '[node-tools %4ss] %s\n' "$(( $(date +%s) - start ))" "$*"; }

link() {
  mkdir -p "$repo/.tools"
  ln -sfn "$final" "$repo/.tools/node"
}

if [[ -f "$final/.complete" ]]; then
  link
  say "node tools ready (cached) at $final"
  exit 0
fi

command -v go >/dev/null || { echo "build-node-tools: Go is required (go 1.26+ on PATH)" >&2; exit 2; }
mkdir -p "$stage/bin"
say "building node tool set $hash into $stage (a first build takes about 10 minutes on 2 cores)"

build() { # build NAME CMD...: runs CMD (which must write $tmp) unless $stage/bin/NAME exists
  local name=$1 out="$stage/bin/$1"; shift
  if [[ -x "$out" ]]; then say "$name: already built"; return; fi
  local t0; t0=$(date +%s)
  say "$name: building"
  tmp="$out.tmp.$$"
  "$@"
  mv -f "$tmp" "$out"
  say "$name: done in $(( $(date +%s) - t0 ))s"
}

wrapper_dir() { # a scratch copy of a committed wrapper module, so the build never writes into the repo
  local src="$here/gomod/$1" dst="$stage/gomod/$1"
  mkdir -p "$dst"; cp "$src"/go.mod "$src"/go.sum "$dst"/
  ( cd "$dst" && go mod download )
  echo "$dst"
}

kube_ldflags() {
  local v=$KUBE_VERSION maj min ld="" p
  maj=${v#v}; maj=${maj%%.*}; min=${v#v*.}; min=${min%%.*}
  for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    ld+=" -X $p.gitVersion=$v -X $p.gitMajor=$maj -X $p.gitMinor=$min -X $p.gitTreeState=clean"
  done
  echo "$ld -s -w"
}

build_kube() { # $1 = cmd name
  local d; d=$(wrapper_dir kubenode)
  ( cd "$d" && go build -p "$jobs" -tags selinux,notest,grpcnotrace -ldflags "all=$(kube_ldflags)" \
      -o "$tmp" "k8s.io/kubernetes/cmd/$1" )
}

build_containerd() { # $1 = cmd name
  local d; d=$(wrapper_dir containerd) pkg=github.com/containerd/containerd/v2
  ( cd "$d" && go build -p "$jobs" -tags "no_btrfs no_devmapper no_zfs urfave_cli_no_docs" \
      -ldflags "-s -w -X $pkg/version.Version=$CONTAINERD_VERSION -X $pkg/version.Package=$pkg" \
      -o "$tmp" "$pkg/cmd/$1" )
}

build_tool() { # $1 = wrapper module, $2 = ldflags: the module's one `tool` package
  local d pkg; d=$(wrapper_dir "$1"); pkg=$(sed -n 's/^tool //p' "$d/go.mod")
  ( cd "$d" && go build -p "$jobs" -ldflags "-s -w $2" -o "$tmp" "$pkg" )
}

fetch_deb_binary() { # $1 = Debian package, $2 = its binary: extracted, never installed
  local d="$stage/deb/$1"
  mkdir -p "$d"
  ( cd "$d" && { apt-get download -qq "$1" 2>/dev/null || { apt-get update -qq && apt-get download -qq "$1"; }; } )
  dpkg-deb -x "$d"/"$1"_*.deb "$d/root"
  cp "$d/root/usr/bin/$2" "$tmp"
  dpkg-deb -f "$d"/"$1"_*.deb Version > "$stage/$1.version"
}

build_pause() { # the sandbox container's program (tools/node/pause): no dependencies, nothing to download
  ( cd "$here/pause" && go build -ldflags "-s -w" -o "$tmp" . )
}

build pause build_pause
for c in containerd containerd-shim-runc-v2 ctr; do build "$c" build_containerd "$c"; done
for c in kube-proxy kubelet; do build "$c" build_kube "$c"; done
build nats-server build_tool nats ""
build etcd build_tool etcd ""
build lws-controller build_tool lws "-X sigs.k8s.io/lws/pkg/version.GitVersion=$LWS_VERSION"
build local-path-provisioner build_tool local-path-provisioner "-X main.VERSION=$LOCAL_PATH_PROVISIONER_VERSION"
build prometheus-adapter build_tool prometheus-adapter ""
build prometheus fetch_deb_binary prometheus prometheus

"$stage/bin/kubelet" --version | grep -q "$KUBE_VERSION" || { echo "build-node-tools: kubelet version stamp wrong" >&2; exit 1; }
"$stage/bin/containerd" --version | grep -q "$CONTAINERD_VERSION" || { echo "build-node-tools: containerd version wrong" >&2; exit 1; }
built_at() { # BINARY MODULE VERSION: the wrapper built exactly the pinned module (go.mod vs pins.env)
  go version -m "$stage/bin/$1" | grep -qE "^[[:space:]]+(mod|dep)[[:space:]]+$2[[:space:]]+$3([[:space:]]|\$)" \
    || { echo "build-node-tools: $1 is not built from $2 $3 (tools/node/pins.env vs its gomod/ wrapper)" >&2; exit 1; }
}
built_at nats-server github.com/nats-io/nats-server/v2 "$NATS_VERSION"
built_at etcd go.etcd.io/etcd/server/v3 "$ETCD_SERVICE_VERSION"
built_at lws-controller sigs.k8s.io/lws "$LWS_VERSION"
built_at local-path-provisioner github.com/rancher/local-path-provisioner "$LOCAL_PATH_PROVISIONER_VERSION"
built_at prometheus-adapter sigs.k8s.io/prometheus-adapter "$PROMETHEUS_ADAPTER_VERSION"
# (the output first, then grep: `grep -q` stops reading at its match, and pipefail would fail on the SIGPIPE)
[[ $("$stage/bin/nats-server" --version) == *"${NATS_VERSION#v}"* ]] || { echo "build-node-tools: nats-server version wrong" >&2; exit 1; }
[[ $("$stage/bin/etcd" --version) == *"${ETCD_SERVICE_VERSION#v}"* ]] || { echo "build-node-tools: etcd version wrong" >&2; exit 1; }
[[ $("$stage/bin/prometheus" --version 2>&1) == *"version $PROMETHEUS_DEBIAN_VERSION"* ]] \
  || { echo "build-node-tools: Debian's prometheus is not $PROMETHEUS_DEBIAN_VERSION (tools/node/pins.env)" >&2; exit 1; }
rm -rf "$stage/gomod" "$stage/deb"
touch "$stage/.complete"
rm -rf "$final"; mv "$stage" "$final"
link
say "node tools ready at $final (linked at .tools/node)"
