# Sourced by the build scripts of hack/: numbered build steps that say
# what they build, how long it should take, and, while a long build runs,
# that it is still going, so that a first run that takes minutes does not
# look stuck.
#
#   PROGRESS_STEP   number of the next step (default 1)
#   PROGRESS_TOTAL  number of steps in all
#
#   progress_step NAME ESTIMATE COMMAND...
#
# The command's own output (go's "downloading" lines, the compiler's) goes
# to a log file, shown only if the command fails.

PROGRESS_STEP="${PROGRESS_STEP:-1}"
PROGRESS_TOTAL="${PROGRESS_TOTAL:-1}"
# How often a running build says it is still running, in seconds.
PROGRESS_HEARTBEAT="${PROGRESS_HEARTBEAT:-60}"

progress_step() {
  local name="$1" estimate="$2" started=$SECONDS ticker log
  shift 2
  log="$(mktemp "${TMPDIR:-/tmp}/trainforge-build-XXXXXX.log")"
  echo "[$PROGRESS_STEP/$PROGRESS_TOTAL] building $name (about $estimate on 2 cores)..." >&2
  # The ticker's sleep goes with it, and it holds no stdout: a caller
  # reading the script's output through a pipe waits for no one.
  (
    trap 'kill "$nap" 2>/dev/null; exit 0' TERM
    while :; do
      sleep "$PROGRESS_HEARTBEAT" &
      nap=$!
      wait "$nap"
      echo "      still building $name: $(progress_elapsed "$started") so far" >&2
    done
  ) </dev/null >/dev/null &
  ticker=$!
  # The ticker goes whether the build succeeds or not.
  if ! "$@" >"$log" 2>&1; then
    kill "$ticker" 2>/dev/null || true
    echo "building $name failed; the end of its output (all of it in $log):" >&2
    tail -n 40 "$log" >&2
    return 1
  fi
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  rm -f "$log"
  echo "[$PROGRESS_STEP/$PROGRESS_TOTAL] built $name in $(progress_elapsed "$started")" >&2
  PROGRESS_STEP=$((PROGRESS_STEP + 1))
}

# progress_elapsed START prints the time since START (a $SECONDS value).
progress_elapsed() {
  local s=$((SECONDS - $1))
  if ((s < 60)); then echo "${s}s"; else echo "$((s / 60)) min $((s % 60))s"; fi
}
