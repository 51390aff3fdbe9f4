#!/usr/bin/env bash
# The nightly tuning job: run (or resume last night's unfinished run of) an experiment, then judge
# tonight's commit with the paired gate (`tunebench gate`: tonight's build and the reference night's build
# run tonight, interleaved, at the reference's chosen config, until the sequential CI decides), then write
# the history report (trends across nights: a report and a second opinion, never the exit code's only
# evidence).
#
#   EXPERIMENT   experiment file            (default experiments/default.yaml)
#   REPORTS      reports folder             (default reports)
#   THRESHOLD    regression threshold, %    (default 5)
#   BUILD        build command, run with sh -c in each commit's worktree before its trials (default: none)
#   MAX_ROUNDS   the most paired rounds a night's gate runs (default 20: 40 trials at most)
#   TUNEBENCH    how to call tunebench      (default: node <repo>/dist/harness/cli/main.js)
#   BISECT       1: on a regression, bisect between the reference's commit and tonight's (default 0)
#   BISECT_BUILD the bisection's --build command (default: BUILD)
#
# Exit codes: 0 no regression (the first night, a night of the reference's own commit, a night the paired
# CI clears, or one it could not decide: it says so); 3 regression beyond THRESHOLD (with BISECT=1 too,
# whatever the bisection found); 4 chosen config changed; 130 stopped by a signal (resume with the same
# command); 1 or 2 as `tunebench run` (see the README), 1 also when a build fails.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
EXPERIMENT="${EXPERIMENT:-experiments/default.yaml}"
REPORTS="${REPORTS:-reports}"
THRESHOLD="${THRESHOLD:-5}"
BUILD="${BUILD:-}"
MAX_ROUNDS="${MAX_ROUNDS:-20}"
BISECT="${BISECT:-0}"
BISECT_BUILD="${BISECT_BUILD:-$BUILD}"
read -r -a tunebench <<< "${TUNEBENCH:-node $repo/dist/harness/cli/main.js}"

# Runs a command in the background, in a process group of its own, and passes SIGTERM/SIGINT on to it
# once (SLURM signals this shell), so that tunebench can stop its trial cleanly and write a partial
# report. Its own group matters: a signal to this script's group (kill -TERM -<pgid>, a terminal's
# Ctrl-C) would otherwise reach tunebench directly and once more through the trap, and a second signal
# makes tunebench exit at once, without the partial report.
forward() {
  set -m
  "$@" &
  local pid=$! rc=0
  set +m
  trap 'kill -TERM "$pid" 2>/dev/null' TERM INT
  wait "$pid" || rc=$?
  if kill -0 "$pid" 2>/dev/null; then rc=0; wait "$pid" || rc=$?; fi
  trap - TERM INT
  return "$rc"
}

# A field of the night the gate judged last (<reports>/<experiment>/nights.json): "dir" (tonight's run
# directory) or "bisect" (the bisect command's arguments, NUL-separated); nothing when there is none.
last_night() {
  node -e '
    const fs = require("fs"), path = require("path");
    const [root, name, field] = process.argv.slice(1);
    try {
      const n = JSON.parse(fs.readFileSync(path.join(root, name, "nights.json"), "utf8")).nights.at(-1);
      if (field === "dir" && n) process.stdout.write(n.dir);
      if (field === "bisect" && n && n.bisect) process.stdout.write(n.bisect.map((a) => `${a}\0`).join(""));
    } catch {}' "$REPORTS" "$name" "$1" 2>/dev/null || true
}

# Runs the bisection of a regression into $REPORTS/bisect/; the night still exits 3, whatever it finds.
run_bisect() {
  local args=() build=() rc=0
  mapfile -d '' args < <(last_night bisect)
  if ((${#args[@]} == 0)); then
    echo "tunebench nightly: BISECT=1, but the gate gave no bisect command" >&2
    return
  fi
  [[ -n "$BISECT_BUILD" ]] && build=(--build "$BISECT_BUILD")
  echo "tunebench nightly: bisecting the regression (BISECT=1) into $REPORTS/bisect/" >&2
  forward "${tunebench[@]}" "${args[@]}" "${build[@]}" --out "$REPORTS" --quiet || rc=$?
  ((rc == 0)) || echo "tunebench nightly: the bisection exited $rc (a stopped one continues with tunebench bisect --resume <run-dir>)" >&2
}

echo "tunebench nightly: $(date -u +%FT%TZ) on $(hostname): $EXPERIMENT -> $REPORTS"
# A run killed last night (preemption, node failure, OOM killer) is resumed, not started over.
forward "${tunebench[@]}" run "$EXPERIMENT" --out "$REPORTS" --resume-unfinished --quiet || exit $?

status=0
# The experiment's name as tunebench reads it (YAML or JSON, comments and quotes handled).
name="$("${tunebench[@]}" validate "$EXPERIMENT" --json | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => process.stdout.write(JSON.parse(s).name))')"
build=()
[[ -n "$BUILD" ]] && build=(--build "$BUILD")
# The paired gate: its sentence on stdout, exit 3 on a regression beyond THRESHOLD.
forward "${tunebench[@]}" gate "$REPORTS" --experiment "$name" --threshold "$THRESHOLD" \
  --max-rounds "$MAX_ROUNDS" "${build[@]}" --quiet || status=$?
# The history report (trends, change points; markdown to $GITHUB_STEP_SUMMARY when that is set): exit 4 when
# the chosen config changed. It never fails a night for a regression: that is the paired gate's to say.
history_status=0
forward "${tunebench[@]}" history "$REPORTS" --experiment "$name" --fail-on-config-change --quiet \
  >/dev/null || history_status=$?
if [[ "$status" == 0 && "$history_status" != 0 ]]; then status=$history_status; fi
case "$status" in
  0) echo "tunebench nightly: no regression" ;;
  3)
    latest="$(last_night dir)"
    accept="tunebench baseline accept $(printf '%q' "${latest:-$REPORTS/<experiment>/<run-id>}")"
    echo "tunebench nightly: REGRESSION beyond ${THRESHOLD}% (see $REPORTS/$name/nights.json and $REPORTS/history/; if it is intended: $accept)" >&2
    if [[ "$BISECT" == 1 ]]; then run_bisect; fi
    ;;
  4) echo "tunebench nightly: the CHOSEN CONFIG CHANGED (see $REPORTS/history/)" >&2 ;;
  *) echo "tunebench nightly: the gate or the history failed with exit $status" >&2 ;;
esac
exit "$status"
