#!/usr/bin/env bash
# make test-under-load: the test suites on a busy machine. BUSY processes
# (default 2, one per core here) spin beside the tests for the whole run:
# `make test` once, then the suites that wait on real processes and API
# servers (TIMED_SUITES) REPEAT times each (default 3). Every run must
# pass: a spec that fails here depends on the machine being idle. The
# table of runs is printed at the end (hack/test-stages.sh) and kept in
# $STAGES_OUT/table.md (default bin/under-load/).
set -euo pipefail

cd "$(dirname "$0")/.."
busy="${BUSY:-2}"
repeat="${REPEAT:-3}"
read -r -a suites <<<"${TIMED_SUITES:-test-faults test-integration test-e2e}"

pids=()
stop_busy() {
  if ((${#pids[@]})); then kill "${pids[@]}" 2>/dev/null || true; fi
}
trap stop_busy EXIT
for _ in $(seq "$busy"); do
  # sha256sum of an endless input: one core busy, no memory, no I/O.
  sha256sum /dev/zero >/dev/null &
  pids+=($!)
done
echo "$busy busy processes beside the tests (pids ${pids[*]})" >&2

runs=()
if [[ "${SKIP_MAKE_TEST:-}" == "" ]]; then runs+=(test); fi
for _ in $(seq "$repeat"); do runs+=("${suites[@]}"); done
STAGES_OUT="${STAGES_OUT:-bin/under-load}" hack/test-stages.sh "${runs[@]}"
