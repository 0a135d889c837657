#!/usr/bin/env bash
# Runs the stages of `make test` one by one, in make test's order, and
# prints how long each took: the table of docs/testing.md comes from it.
#
#   hack/test-stages.sh                 every stage of make test
#   hack/test-stages.sh test-unit vet   only these, in this order
#
# Each stage is `make STAGE`; its output goes to $STAGES_OUT/N-STAGE.log
# (default bin/stages/; N numbers the runs, as a stage may be named twice) and a failed stage does not stop the next one, so
# that one run times them all. The table is printed at the end and kept in
# $STAGES_OUT/table.md. It exits non-zero when a stage failed.
#
# A cold run is one with empty caches; to time one without emptying yours,
# point the caches elsewhere for the run:
#
#   d=$(mktemp -d) GOCACHE=$d/go-build GOMODCACHE=$d/mod TRAINFORGE_CACHE=$d/trainforge hack/test-stages.sh
set -uo pipefail

cd "$(dirname "$0")/.."
out="${STAGES_OUT:-bin/stages}"
mkdir -p "$out"

stages=("$@")
if [[ ${#stages[@]} -eq 0 ]]; then
  # make test's stages, in the order it runs them; the suites it runs side
  # by side (test-suites) run here one at a time, so that each is timed alone.
  read -r -a stages <<<"$(sed -n 's/^\(TEST_STAGES\|TEST_SUITES\|TEST_SUITES_BESIDE\) := //p' Makefile | tr '\n' ' ')"
  stages=(test-bin "${stages[@]}")
fi

failed=0
rows=()
total=0
n=0
for s in "${stages[@]}"; do
  n=$((n + 1))
  log="$out/$(printf '%02d' "$n")-$s.log"
  start=$SECONDS
  echo "--- $s" >&2
  if make --no-print-directory "$s" >"$log" 2>&1; then
    result=passed
  else
    result="FAILED (log: $log)"
    failed=1
    tail -n 20 "$log" >&2
  fi
  took=$((SECONDS - start))
  total=$((total + took))
  rows+=("$(printf '| %s | %d:%02d | %s |' "$s" $((took / 60)) $((took % 60)) "$result")")
  echo "    $s: ${took}s, $result" >&2
done

{
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
  echo
  echo "| stage | time (m:ss) | result |"
  echo "|---|---|---|"
  printf '%s\n' "${rows[@]}"
  printf '| all | %d:%02d | |\n' $((total / 60)) $((total % 60))
} | tee "$out/table.md"
exit "$failed"
