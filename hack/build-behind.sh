#!/usr/bin/env bash
# Runs a command (make test's stages) while what its later stages need and
# the caches lack is built behind it at the lowest CPU priority: envtest's
# etcd and kube-apiserver (hack/envtest.sh), the simulated cluster's
# binaries (hack/cluster-binaries.sh), then Helm: in the order make test's
# stages need them (the suites on an API server, the e2e suite, then the
# install checks).
#
#   hack/build-behind.sh COMMAND...
#
# Why: on a machine with empty caches these builds are about half of
# `make test` (docs/testing.md), and run one after the other in the stage
# that first needs each, while the CPU the earlier stages leave idle (tests
# that wait for processes, API servers and real training) goes unused.
# Behind them, at nice 19, the builds take only that idle CPU. A stage that
# needs a binary still being built waits for it (the build scripts' locks,
# the Makefile's atomic tool builds) and, if the build behind failed, builds
# it itself and says why. With warm caches there is nothing to build and
# the command runs alone.
#
# BUILD_BEHIND=0 runs the command alone. The builds' output goes to
# BUILD_BEHIND_LOG (default bin/build-behind.log). HELM is the path of the
# Helm binary the Makefile builds (`make helm`).
set -euo pipefail

cd "$(dirname "$0")/.."
# Alone when turned off, and under make -n, which must build nothing.
makeflags="${MAKEFLAGS:-}"
makeflags="${makeflags%% *}"
if [[ "${BUILD_BEHIND:-1}" == 0 || ( "$makeflags" != -* && "$makeflags" == *n* ) ]]; then
  exec "$@"
fi
log="${BUILD_BEHIND_LOG:-$PWD/bin/build-behind.log}"

todo=()
mapfile -t todo < <(hack/cluster-binaries.sh --missing)
if [[ -n "${HELM:-}" && ! -x "$HELM" ]]; then todo+=(helm); fi
if ((${#todo[@]} == 0)); then
  exec "$@"
fi

mkdir -p "$(dirname "$log")"
export BUILD_BEHIND_LOG="$log"
echo "building behind the tests, at the lowest priority: ${todo[*]} (log: $log)" >&2
# Its own session, so that one signal stops the builds and every compiler
# they started. MAKEFLAGS goes: the make below is not part of ours. Where
# the kernel groups the scheduling by session (autogroup, on in most
# distributions' kernels), a new session gets a CPU share equal to the
# tests' whatever its processes' nice: the session's own nice goes to 19
# too, or the builds took a third of the CPU from go vet.
setsid nice -n 19 env -u MAKEFLAGS -u MAKELEVEL bash -c '
  set -euo pipefail
  if [[ -w /proc/self/autogroup ]]; then echo 19 >/proc/self/autogroup || true; fi
  hack/envtest.sh >/dev/null
  hack/cluster-binaries.sh >/dev/null
  if [[ -n "${HELM:-}" ]]; then make --no-print-directory helm >/dev/null; fi
' >"$log" 2>&1 </dev/null &
behind=$!

# SIGTERM: what a script starts with & ignores SIGINT.
stop_behind() {
  kill -TERM -- "-$behind" 2>/dev/null || true
}
trap stop_behind EXIT
# The builds are in a session of their own, which a signal to make's
# process group does not reach: stop them when that signal ends this script.
trap 'exit 130' INT
trap 'exit 143' TERM

status=0
"$@" || status=$?

# Every stage that needed a build has waited for it, so the builds are
# done unless the command stopped early.
if kill -0 "$behind" 2>/dev/null; then
  echo "stopping the builds behind the tests (log: $log)" >&2
elif ! wait "$behind"; then
  echo "the builds behind the tests failed; the stages that needed them built them again. The end of $log:" >&2
  tail -n 20 "$log" >&2
fi
exit "$status"
