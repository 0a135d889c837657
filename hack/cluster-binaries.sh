#!/usr/bin/env bash
# Builds, from the Go module proxy, every binary of the simulated cluster
# that `make demo` and the e2e suite run, and prints the directory that holds
# them:
#
#   etcd, kube-apiserver        as hack/envtest.sh builds them
#   kube-controller-manager     k8s.io/kubernetes, with the version ldflags
#   kube-scheduler              sigs.k8s.io/scheduler-plugins' cmd/scheduler
#                               (the scheduler with the Coscheduling plugin)
#   kwok, kwokctl               sigs.k8s.io/kwok (fake nodes and pods)
#   jobset-controller           sigs.k8s.io/jobset's manager, at go.mod's version
#
# No download site is reachable here, and kwokctl downloads nothing when it
# is given these binaries. Each binary is cached outside the repository,
# keyed by its version, so later runs (and fresh clones) reuse it. While a
# build runs it prints what it builds and an estimate on stderr.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"

K8S_VERSION="${K8S_VERSION:-v1.37.2}"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
# The JobSet controller and the scheduler plugins run at the versions whose
# API types the controller compiles against.
JOBSET_VERSION="${JOBSET_VERSION:-$(cd "$repo" && go list -m -f '{{.Version}}' sigs.k8s.io/jobset)}"
SCHEDULER_PLUGINS_VERSION="${SCHEDULER_PLUGINS_VERSION:-$(cd "$repo" && go list -m -f '{{.Version}}' sigs.k8s.io/scheduler-plugins)}"
CACHE_ROOT="${TRAINFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainforge}"
OUT="$CACHE_ROOT/cluster/k8s-$K8S_VERSION-kwok-$KWOK_VERSION-jobset-$JOBSET_VERSION-sp-$SCHEDULER_PLUGINS_VERSION"

log() { echo "cluster: $*" >&2; }

# etcd and kube-apiserver are envtest's.
envtest_dir="$(K8S_VERSION="$K8S_VERSION" "$here/envtest.sh")"
mkdir -p "$OUT"
for b in etcd kube-apiserver; do
  ln -sf "$envtest_dir/$b" "$OUT/$b"
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# gomod_of prints the path of a module's go.mod in the module cache.
gomod_of() {
  go mod download -json "$1@$2" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p'
}

# replaces_of prints the -replace flags that reproduce a module's own
# replace directives (see hack/modreplaces).
replaces_of() {
  (cd "$repo" && go run ./hack/modreplaces flags "$@")
}

# build builds one package of a module at a version into $OUT/<name>.
#   build NAME MODULE VERSION PACKAGE STAGING_VERSION LDFLAGS
build() {
  local name="$1" module="$2" version="$3" pkg="$4" staging="$5" ldflags="$6"
  local dir="$work/$name"
  mkdir -p "$dir"
  (
    cd "$dir"
    go mod init "trainforge.local/cluster-$name" >/dev/null 2>&1
    local gomod gover
    gomod="$(gomod_of "$module" "$version")"
    mapfile -t replaces < <(replaces_of "$gomod" "$staging")
    go mod edit -require="$module@$version" "${replaces[@]}"
    gover="$(sed -n 's/^go \(.*\)/\1/p' "$gomod")"
    go mod edit -go="$gover"
    printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$pkg" >tools.go
    go mod tidy >/dev/null 2>&1 || go mod tidy
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ldflags" -o "$OUT/$name.tmp" "$pkg"
  )
  mv "$OUT/$name.tmp" "$OUT/$name"
}

k8s_ldflags() {
  local program="$1" minor="${K8S_VERSION#v1.}"
  minor="${minor%%.*}"
  local v=k8s.io/component-base/version
  echo "-X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean -X $v/verflag.programName=$program"
}

# step builds one binary unless the cache has it: name, estimate on 2
# cores, and how to build it.
started=$SECONDS
step() {
  local name="$1" estimate="$2"
  shift 2
  if [[ -x "$OUT/$name" ]]; then
    return
  fi
  log "building $name (first run only; about $estimate on 2 cores; $((SECONDS - started))s so far)"
  "$@"
  log "built $name in $((SECONDS - started))s so far"
}

step kube-controller-manager "10 minutes" \
  build kube-controller-manager k8s.io/kubernetes "$K8S_VERSION" k8s.io/kubernetes/cmd/kube-controller-manager \
  "v0.${K8S_VERSION#v1.}" "$(k8s_ldflags kube-controller-manager)"
# The scheduler-plugins module pins its own Kubernetes release through
# replace directives; its version ldflags follow that release.
sp_k8s="$(cd "$repo" && go run ./hack/modreplaces version "$(gomod_of sigs.k8s.io/scheduler-plugins "$SCHEDULER_PLUGINS_VERSION")" k8s.io/kubernetes)"
step kube-scheduler "5 minutes" \
  build kube-scheduler sigs.k8s.io/scheduler-plugins "$SCHEDULER_PLUGINS_VERSION" sigs.k8s.io/scheduler-plugins/cmd/scheduler \
  "" "$(K8S_VERSION="${sp_k8s:-$K8S_VERSION}" k8s_ldflags kube-scheduler)"
step jobset-controller "3 minutes" \
  build jobset-controller sigs.k8s.io/jobset "$JOBSET_VERSION" sigs.k8s.io/jobset "" ""
step kwok "3 minutes" \
  build kwok sigs.k8s.io/kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok "" ""
step kwokctl "3 minutes" \
  build kwokctl sigs.k8s.io/kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwokctl "" ""

echo "$OUT"
