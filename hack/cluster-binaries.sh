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
#   jobset-in-place-restart-agent
#                               JobSet's in-place restart agent, which a
#                               trainer container runs its worker under
#   kueue/                      sigs.k8s.io/kueue's manager (cmd/kueue) at
#                               KUEUE_VERSION, with the module's CRDs and
#                               webhook manifests, which the e2e suite's
#                               Kueue spec runs
#
# They are built in two module graphs (hack/k8s-module.sh), so that what
# they share compiles once. No download
# site is reachable here, and kwokctl downloads nothing when it is given
# these binaries. Each binary is cached outside the repository, keyed by
# the versions of that graph, so later runs (and fresh clones) reuse it. A first
# run numbers its builds on stderr, each with an estimate, and says every
# minute that a long build is still going.
#
#   hack/cluster-binaries.sh            build what is missing, print the directory
#   hack/cluster-binaries.sh --missing  print the names of the binaries a run
#                                       would build, one a line, and build nothing
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
# The versions, and the module graphs the binaries are built in.
# shellcheck source=hack/k8s-module.sh
source "$here/k8s-module.sh"
CACHE_ROOT="${TRAINFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainforge}"
OUT="$CACHE_ROOT/cluster/${K8S_MODULE_KEY[k8s]}-${K8S_MODULE_KEY[sp]}"
# Kueue's manager, its CRDs and webhook manifests (OUT's key names its
# version).
KUEUE_OUT="$OUT/kueue"

# What a run builds: envtest's binaries first, then the cluster's, so that
# every build is numbered and the first line says how long all will take.
mapfile -t envtest_missing < <(K8S_VERSION="$K8S_VERSION" "$here/envtest.sh" --missing)
cluster_bins=(kube-controller-manager kube-scheduler jobset-controller jobset-in-place-restart-agent kwok kwokctl)
# Minutes each build took on 2 cores after the API server's, rounded up,
# in this order: each reuses most of what the builds before it compiled.
declare -A minutes=([etcd]=1 [kube-apiserver]=6 [kube-controller-manager]=2 [kube-scheduler]=6
  [jobset-controller]=1 [jobset-in-place-restart-agent]=1 [kwok]=1 [kwokctl]=1 [kueue]=2)
kueue_ready() { [[ -x "$KUEUE_OUT/manager" && -d "$KUEUE_OUT/crd" && -f "$KUEUE_OUT/webhook/manifests.yaml" ]]; }
find_todo() {
  todo=("${envtest_missing[@]}")
  for b in "${cluster_bins[@]}"; do
    [[ -x "$OUT/$b" ]] || todo+=("$b")
  done
  kueue_ready || todo+=(kueue)
}
find_todo
if [[ "${1:-}" == "--missing" ]]; then
  if [[ ${#todo[@]} -gt 0 ]]; then printf '%s\n' "${todo[@]}"; fi
  exit 0
fi
if [[ ${#todo[@]} -eq 0 ]]; then
  echo "$OUT"
  exit 0
fi
# One build at a time: a second run waits, then finds the binaries built.
k8s_lock "$OUT.lock"
find_todo
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

# step builds one binary unless the cache has it: name, ldflags.
step() {
  local name="$1" ldflags="${2:-}"
  if [[ -x "$OUT/$name" ]]; then
    return
  fi
  progress_step "$name" "${minutes[$name]} min" k8s_build "$name" "$OUT/$name" "$ldflags"
}

step kube-controller-manager "$(k8s_version_ldflags kube-controller-manager)"
# The scheduler of sigs.k8s.io/scheduler-plugins (kube-scheduler with the
# Coscheduling plugin registered) is the Kubernetes release its go.mod
# pins, and says so.
if [[ ! -x "$OUT/kube-scheduler" ]]; then
  sp_k8s="$(k8s_sp_version)"
  step kube-scheduler "$(k8s_version_ldflags kube-scheduler "${sp_k8s:-$K8S_VERSION}")"
fi
step jobset-controller
step jobset-in-place-restart-agent
step kwok
step kwokctl

# build_kueue builds Kueue's manager into $KUEUE_OUT/manager and copies,
# from the same module, its CRDs (config/components/crd/bases) and its
# webhook manifests (config/components/webhook/manifests.yaml).
build_kueue() {
  local dir
  dir="$(go mod download -json "sigs.k8s.io/kueue@$KUEUE_VERSION" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')"
  mkdir -p "$KUEUE_OUT"
  k8s_build kueue "$KUEUE_OUT/manager" "-X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION"
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

echo "$OUT"
