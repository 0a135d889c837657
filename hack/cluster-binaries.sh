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
#   kueue/                      sigs.k8s.io/kueue's manager (cmd/kueue) at
#                               KUEUE_VERSION, with the module's CRDs and
#                               webhook manifests, which the e2e suite's
#                               Kueue spec runs
#
# No download site is reachable here, and kwokctl downloads nothing when it
# is given these binaries. Each binary is cached outside the repository,
# keyed by its version, so later runs (and fresh clones) reuse it. A first
# run numbers its builds on stderr, each with an estimate, and says every
# minute that a long build is still going.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"

K8S_VERSION="${K8S_VERSION:-v1.37.2}"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
# The JobSet controller and the scheduler plugins run at the versions whose
# API types the controller compiles against.
JOBSET_VERSION="${JOBSET_VERSION:-$(cd "$repo" && go list -m -f '{{.Version}}' sigs.k8s.io/jobset)}"
SCHEDULER_PLUGINS_VERSION="${SCHEDULER_PLUGINS_VERSION:-$(cd "$repo" && go list -m -f '{{.Version}}' sigs.k8s.io/scheduler-plugins)}"
# Kueue is no dependency of the controller: the e2e suite runs its manager
# as a process, for a TrainJob in a queue.
KUEUE_VERSION="${KUEUE_VERSION:-v0.17.0}"
CACHE_ROOT="${TRAINFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainforge}"
# Kueue's build is keyed by its version alone; $OUT/kueue links to it.
KUEUE_OUT="$CACHE_ROOT/kueue/$KUEUE_VERSION"
OUT="$CACHE_ROOT/cluster/k8s-$K8S_VERSION-kwok-$KWOK_VERSION-jobset-$JOBSET_VERSION-sp-$SCHEDULER_PLUGINS_VERSION"

# What a run builds: envtest's binaries first, then the cluster's, so that
# every build is numbered and the first line says how long all will take.
mapfile -t envtest_missing < <(K8S_VERSION="$K8S_VERSION" "$here/envtest.sh" --missing)
cluster_bins=(kube-controller-manager kube-scheduler jobset-controller kwok kwokctl)
# Minutes each build took on 2 cores, rounded up, in this order: the
# controller manager reuses most of what the API server's build compiled.
declare -A minutes=([etcd]=1 [kube-apiserver]=6 [kube-controller-manager]=2 [kube-scheduler]=3
  [jobset-controller]=2 [kwok]=1 [kwokctl]=1 [kueue]=4)
todo=("${envtest_missing[@]}")
for b in "${cluster_bins[@]}"; do
  [[ -x "$OUT/$b" ]] || todo+=("$b")
done
kueue_ready() { [[ -x "$KUEUE_OUT/manager" && -d "$KUEUE_OUT/crd" && -f "$KUEUE_OUT/webhook/manifests.yaml" ]]; }
kueue_ready || todo+=(kueue)
if [[ ${#todo[@]} -gt 0 ]]; then
  total_minutes=0
  for b in "${todo[@]}"; do total_minutes=$((total_minutes + minutes[$b])); done
  {
    what="${#todo[@]} binaries"
    [[ ${#todo[@]} -gt 1 ]] || what="1 binary"
    echo "First run: building $what of the simulated cluster from the Go module proxy"
    echo "(about $total_minutes min on 2 cores). They are cached in $CACHE_ROOT and reused by later runs."
  } >&2
fi
export PROGRESS_TOTAL=${#todo[@]}
export PROGRESS_STEP=1
# shellcheck source=hack/progress.sh
source "$here/progress.sh"

# etcd and kube-apiserver are envtest's.
envtest_dir="$(K8S_VERSION="$K8S_VERSION" "$here/envtest.sh")"
PROGRESS_STEP=$((1 + ${#envtest_missing[@]}))
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

# step builds one binary unless the cache has it: name, how to build it.
step() {
  local name="$1"
  shift
  if [[ -x "$OUT/$name" ]]; then
    return
  fi
  progress_step "$name" "${minutes[$name]} min" "$@"
}

step kube-controller-manager \
  build kube-controller-manager k8s.io/kubernetes "$K8S_VERSION" k8s.io/kubernetes/cmd/kube-controller-manager \
  "v0.${K8S_VERSION#v1.}" "$(k8s_ldflags kube-controller-manager)"
# The scheduler-plugins module pins its own Kubernetes release through
# replace directives; its version ldflags follow that release.
sp_k8s="$(cd "$repo" && go run ./hack/modreplaces version "$(gomod_of sigs.k8s.io/scheduler-plugins "$SCHEDULER_PLUGINS_VERSION")" k8s.io/kubernetes)"
step kube-scheduler \
  build kube-scheduler sigs.k8s.io/scheduler-plugins "$SCHEDULER_PLUGINS_VERSION" sigs.k8s.io/scheduler-plugins/cmd/scheduler \
  "" "$(K8S_VERSION="${sp_k8s:-$K8S_VERSION}" k8s_ldflags kube-scheduler)"
step jobset-controller \
  build jobset-controller sigs.k8s.io/jobset "$JOBSET_VERSION" sigs.k8s.io/jobset "" ""
step kwok \
  build kwok sigs.k8s.io/kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok "" ""
step kwokctl \
  build kwokctl sigs.k8s.io/kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwokctl "" ""

# build_kueue builds Kueue's manager into $KUEUE_OUT/manager and copies,
# from the same module, its CRDs (config/components/crd/bases) and its
# webhook manifests (config/components/webhook/manifests.yaml).
build_kueue() {
  local dir
  dir="$(go mod download -json "sigs.k8s.io/kueue@$KUEUE_VERSION" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')"
  mkdir -p "$KUEUE_OUT"
  OUT="$KUEUE_OUT" build manager sigs.k8s.io/kueue "$KUEUE_VERSION" sigs.k8s.io/kueue/cmd/kueue "" \
    "-X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION"
  rm -rf "$KUEUE_OUT/crd.tmp" "$KUEUE_OUT/webhook.tmp"
  mkdir -p "$KUEUE_OUT/crd.tmp" "$KUEUE_OUT/webhook.tmp"
  cp "$dir"/config/components/crd/bases/*.yaml "$KUEUE_OUT/crd.tmp/"
  cp "$dir/config/components/webhook/manifests.yaml" "$KUEUE_OUT/webhook.tmp/"
  chmod -R u+w "$KUEUE_OUT/crd.tmp" "$KUEUE_OUT/webhook.tmp"
  rm -rf "$KUEUE_OUT/crd" "$KUEUE_OUT/webhook"
  mv "$KUEUE_OUT/crd.tmp" "$KUEUE_OUT/crd"
  mv "$KUEUE_OUT/webhook.tmp" "$KUEUE_OUT/webhook"
}
if ! kueue_ready; then
  progress_step "kueue $KUEUE_VERSION" "${minutes[kueue]} min" build_kueue
fi
ln -sfn "$KUEUE_OUT" "$OUT/kueue"

echo "$OUT"
