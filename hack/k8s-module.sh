# Sourced by hack/envtest.sh and hack/cluster-binaries.sh: the module
# graphs that the Kubernetes binaries of the tests and the demo are built
# in.
#
# kube-apiserver, kube-controller-manager, the Coscheduling scheduler
# (sigs.k8s.io/scheduler-plugins' cmd/scheduler), the JobSet controller,
# kwok and Kueue's manager each pin their own Kubernetes libraries (v1.35
# to v1.37). Built each in a module of its own, client-go, apimachinery,
# apiserver and controller-runtime compile once per pin, five times in
# all. Built in a module that requires several of them, Go compiles each
# package they share once, and its build cache serves every later binary.
# Two graphs, because the scheduler plugins do not build with a newer
# Kubernetes than their own (v0.35's Coscheduling uses the scheduler
# framework's QueuedPodInfo, gone in v1.37):
#
#   k8s   K8S_VERSION's libraries: kube-apiserver, kube-controller-manager,
#         the JobSet controller, kwok and kwokctl
#   sp    the Kubernetes release sigs.k8s.io/scheduler-plugins pins, with
#         its own replace directives: its scheduler, and Kueue's manager
#         (whose own pin is a patch release of the same minor)
#
# The k8s graph also takes the versions of Trainforge's own build list
# (its go.mod) for every module it shares with it, and every build uses
# the go command's default flags as Trainforge's builds do (no -trimpath,
# cgo as the machine has it): then client-go, apimachinery, the API types,
# gRPC and the rest that the controller, its tests and the k8s graph's
# binaries all import compile once, in whichever build comes first, and
# the build cache serves the other (about 45 % of the k8s graph's Go
# source). The sp graph keeps its own versions: it replaces every
# Kubernetes module with v1.35's, so that little but the standard library
# would be shared there.
#
#   k8s_module GRAPH   prints the graph's module directory, writing it the
#                      first time (go.mod, go.sum, tools.go) into the
#                      cache, keyed by every version it is made of and by
#                      Trainforge's build list
#   k8s_build NAME OUTFILE [LDFLAGS]
#                      builds binary NAME in its graph
#
# Versions (each overridable from the environment):
K8S_VERSION="${K8S_VERSION:-v1.37.2}"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
KUEUE_VERSION="${KUEUE_VERSION:-v0.17.0}"
_k8s_module_repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The JobSet controller and the scheduler plugins run at the versions whose
# API types the controller compiles against, and the k8s graph links the
# controller-runtime the controller does (v0.25 builds with v1.37's
# libraries; the JobSet controller and kwok ask for older ones).
_k8s_repo_version() { (cd "$_k8s_module_repo" && go list -m -f '{{.Version}}' "$1"); }
JOBSET_VERSION="${JOBSET_VERSION:-$(_k8s_repo_version sigs.k8s.io/jobset)}"
SCHEDULER_PLUGINS_VERSION="${SCHEDULER_PLUGINS_VERSION:-$(_k8s_repo_version sigs.k8s.io/scheduler-plugins)}"
CONTROLLER_RUNTIME_VERSION="${CONTROLLER_RUNTIME_VERSION:-$(_k8s_repo_version sigs.k8s.io/controller-runtime)}"

# Each graph's key: what it is made of. A cache keyed by it is rebuilt
# when any of these changes.
declare -A K8S_MODULE_KEY=(
  [k8s]="k8s-$K8S_VERSION-jobset-$JOBSET_VERSION-kwok-$KWOK_VERSION-cr-$CONTROLLER_RUNTIME_VERSION"
  [sp]="sp-$SCHEDULER_PLUGINS_VERSION-kueue-$KUEUE_VERSION"
)
# The modules whose packages Trainforge's builds and tests compile, at
# their versions: the k8s graph follows them where it shares a module with
# Trainforge (not the whole build list: a module that is in it only
# through some go.mod, such as containerd v1.5, would make imports
# ambiguous). They key the graphs' directories, not the binaries: a change
# of go.mod writes new graphs for what is built later, and never makes a
# binary already built stale.
_k8s_repo_build_list() {
  (cd "$_k8s_module_repo" && go list -deps -test -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}' ./... | sort -u)
}

# The package of each binary, and its graph.
declare -A K8S_MODULE_PACKAGES=(
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
  [jobset-controller]=sigs.k8s.io/jobset
  [jobset-in-place-restart-agent]=sigs.k8s.io/jobset/cmd/in-place-restart-agent
  [kwok]=sigs.k8s.io/kwok/cmd/kwok
  [kwokctl]=sigs.k8s.io/kwok/cmd/kwokctl
  [kube-scheduler]=sigs.k8s.io/scheduler-plugins/cmd/scheduler
  [kueue]=sigs.k8s.io/kueue/cmd/kueue
)
declare -A K8S_MODULE_GRAPH=(
  [kube-apiserver]=k8s [kube-controller-manager]=k8s [jobset-controller]=k8s [jobset-in-place-restart-agent]=k8s [kwok]=k8s [kwokctl]=k8s
  [kube-scheduler]=sp [kueue]=sp
)

# k8s_gomod MODULE VERSION prints the path of a module's go.mod in the
# module cache.
k8s_gomod() {
  go mod download -json "$1@$2" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p'
}

# _k8s_module_write GRAPH MODULES writes the graph's module into the
# current directory; MODULES is _k8s_repo_build_list's output.
_k8s_module_write() {
  local graph="$1" modules="$2" gomod replaces=() requires=()
  go mod init "trainforge.local/k8s-binaries-$graph" >/dev/null 2>&1
  case "$graph" in
  k8s)
    gomod="$(k8s_gomod k8s.io/kubernetes "$K8S_VERSION")"
    # k8s.io/kubernetes replaces its staging modules (k8s.io/api, ...)
    # with local paths, which a dependent module ignores: the same minor's
    # v0.X.Y of each instead (hack/modreplaces).
    mapfile -t replaces < <(cd "$_k8s_module_repo" && go run ./hack/modreplaces flags "$gomod" "v0.${K8S_VERSION#v1.}")
    requires=("k8s.io/kubernetes@$K8S_VERSION" "sigs.k8s.io/jobset@$JOBSET_VERSION" "sigs.k8s.io/kwok@$KWOK_VERSION"
      "sigs.k8s.io/controller-runtime@$CONTROLLER_RUNTIME_VERSION")
    # Trainforge's versions of every other module: minimal version
    # selection takes the higher of them and the graph's own requirements,
    # which are Trainforge's wherever its go.mod is the newer.
    local path version pinned=" ${requires[*]%%@*} "
    while read -r path version; do
      [[ -n "$path" && "$pinned" != *" $path "* ]] && requires+=("$path@$version")
    done <<<"$modules"
    ;;
  sp)
    # The scheduler plugins' go.mod replaces every staging module and
    # k8s.io/kubernetes itself with its release: repeat those replaces.
    gomod="$(k8s_gomod sigs.k8s.io/scheduler-plugins "$SCHEDULER_PLUGINS_VERSION")"
    mapfile -t replaces < <(cd "$_k8s_module_repo" && go run ./hack/modreplaces flags "$gomod")
    requires=("sigs.k8s.io/scheduler-plugins@$SCHEDULER_PLUGINS_VERSION" "sigs.k8s.io/kueue@$KUEUE_VERSION")
    ;;
  *)
    echo "k8s_module: no graph $graph (k8s or sp)" >&2
    return 1
    ;;
  esac
  go mod edit "${requires[@]/#/-require=}" "${replaces[@]}"
  # The go version of the module whose go.mod pins the graph's Kubernetes.
  go mod edit -go="$(sed -n 's/^go \(.*\)/\1/p' "$gomod")"
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for name in "${!K8S_MODULE_PACKAGES[@]}"; do
      [[ "${K8S_MODULE_GRAPH[$name]}" == "$graph" ]] && printf '\t_ "%s"\n' "${K8S_MODULE_PACKAGES[$name]}"
    done
    printf ')\n'
  } >tools.go
  go mod tidy >/dev/null 2>&1 || go mod tidy >&2
}

k8s_module() {
  local graph="$1" modules dir
  modules="$(_k8s_repo_build_list)" || return 1
  dir="${TRAINFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainforge}/k8s-module/${K8S_MODULE_KEY[$graph]}-trainforge-$(sha256sum <<<"$modules" | cut -c1-12)"
  if [[ -f "$dir/tools.go" ]]; then
    echo "$dir"
    return
  fi
  rm -rf "$dir.tmp"
  mkdir -p "$dir.tmp"
  (cd "$dir.tmp" && _k8s_module_write "$graph" "$modules") || return 1
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
  echo "$dir"
}

# k8s_version_ldflags PROGRAM [VERSION] prints the ldflags that give a
# Kubernetes binary its version (default K8S_VERSION): without them it
# reports v0.0.0-master, which clients such as Kueue refuse.
k8s_version_ldflags() {
  local program="$1" version="${2:-$K8S_VERSION}"
  local minor="${version#v1.}"
  minor="${minor%%.*}"
  local v=k8s.io/component-base/version
  echo "-X $v.gitVersion=$version -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean -X $v/verflag.programName=$program"
}

# k8s_sp_version prints the Kubernetes release the scheduler plugins pin.
k8s_sp_version() {
  (cd "$_k8s_module_repo" && go run ./hack/modreplaces version "$(k8s_gomod sigs.k8s.io/scheduler-plugins "$SCHEDULER_PLUGINS_VERSION")" k8s.io/kubernetes)
}

# k8s_build NAME OUTFILE [LDFLAGS] builds binary NAME in its graph into
# OUTFILE (through OUTFILE.tmp, so that a build cut short leaves nothing a
# later run would take for done). Every build uses the flags Trainforge's
# own builds and tests use (the go command's defaults; -ldflags only
# changes the link), so that the packages they share compile once.
k8s_build() {
  local name="$1" out="$2" ldflags="${3:-}" module
  module="$(k8s_module "${K8S_MODULE_GRAPH[$name]}")"
  (cd "$module" && go build -ldflags "-s -w $ldflags" -o "$out.tmp" "${K8S_MODULE_PACKAGES[$name]}")
  mv "$out.tmp" "$out"
}

# k8s_lock FILE holds an exclusive lock on FILE until the script exits, so
# that two runs (two suites started at once) build each binary once: the
# second waits, then finds it built.
k8s_lock() {
  mkdir -p "$(dirname "$1")"
  exec {_k8s_lock_fd}>"$1"
  if ! flock -n "$_k8s_lock_fd"; then
    echo "waiting for another build of the Kubernetes binaries ($1${BUILD_BEHIND_LOG:+; the builds behind the tests log to $BUILD_BEHIND_LOG})..." >&2
    flock "$_k8s_lock_fd"
  fi
}
