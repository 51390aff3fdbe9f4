#!/usr/bin/env bash
# The nightly tuning job: run (or resume last night's unfinished run of) an experiment, then check the
# history against the baseline and fail loudly on a regression or a changed chosen config.
#
#   EXPERIMENT   experiment file            (default experiments/default.yaml)
#   REPORTS      reports folder             (default reports)
#   THRESHOLD    regression threshold, %    (default 5)
#   CONFIRM      1: re-run the flagged configs before failing on an alarm (default); 0: --no-confirm
#   TUNEBENCH    how to call tunebench      (default: node <repo>/dist/harness/cli/main.js)
#   BISECT       1: on a regression, run the `tunebench bisect` command history printed (default 0)
#   BISECT_BUILD the bisection's --build command, run in each commit's worktree (default: none)
#
# Exit codes: 0 all good; 3 regression beyond THRESHOLD (with BISECT=1 too, whatever the bisection
# found); 4 chosen config changed; 130 stopped by a signal (resume with the same command); 1 or 2 as
# `tunebench run` (see the README).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
EXPERIMENT="${EXPERIMENT:-experiments/default.yaml}"
REPORTS="${REPORTS:-reports}"
THRESHOLD="${THRESHOLD:-5}"
CONFIRM="${CONFIRM:-1}"
BISECT="${BISECT:-0}"
BISECT_BUILD="${BISECT_BUILD:-}"
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

# The run that history judged (its history.json names it), for the accept command printed on a regression.
latest_run_dir() {
  node -e '
    const fs = require("fs"), path = require("path");
    const [root, name] = process.argv.slice(1);
    for (const d of fs.readdirSync(root)) {
      try {
        const h = JSON.parse(fs.readFileSync(path.join(root, d, "history.json"), "utf8"));
        if (h.experiment === name && h.gate) process.stdout.write(h.gate.latest.dir);
      } catch {}
    }' "$REPORTS/history" "$name" 2>/dev/null || true
}

# The arguments of the bisect command history printed for the regression (history.json's bisect.args),
# NUL-separated; nothing when it gave none.
bisect_args() {
  node -e '
    const fs = require("fs"), path = require("path");
    const [root, name] = process.argv.slice(1);
    for (const d of fs.readdirSync(root)) {
      try {
        const h = JSON.parse(fs.readFileSync(path.join(root, d, "history.json"), "utf8"));
        if (h.experiment === name && h.bisect && h.bisect.available)
          process.stdout.write(h.bisect.args.map((a) => `${a}\0`).join(""));
      } catch {}
    }' "$REPORTS/history" "$name" 2>/dev/null || true
}

# Runs the bisection of a regression into $REPORTS/bisect/; the night still exits 3, whatever it finds.
run_bisect() {
  local args=() build=() rc=0
  mapfile -d '' args < <(bisect_args)
  if ((${#args[@]} == 0)); then
    echo "tunebench nightly: BISECT=1, but history gave no bisect command (it said why above)" >&2
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

# Markdown goes to $GITHUB_STEP_SUMMARY by itself when that variable is set.
status=0
confirm=()
[[ "$CONFIRM" == 0 ]] && confirm=(--no-confirm)
# The experiment's name as tunebench reads it (YAML or JSON, comments and quotes handled).
name="$("${tunebench[@]}" validate "$EXPERIMENT" --json | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => process.stdout.write(JSON.parse(s).name))')"
forward "${tunebench[@]}" history "$REPORTS" --experiment "$name" \
  --fail-on-regression "$THRESHOLD" --fail-on-config-change "${confirm[@]}" || status=$?
case "$status" in
  0) echo "tunebench nightly: no regression" ;;
  3)
    latest="$(latest_run_dir)"
    accept="tunebench baseline accept $(printf '%q' "${latest:-$REPORTS/<experiment>/<run-id>}")"
    echo "tunebench nightly: REGRESSION beyond ${THRESHOLD}% (see $REPORTS/history/; if it is intended: $accept)" >&2
    if [[ "$BISECT" == 1 ]]; then run_bisect; fi
    ;;
  4) echo "tunebench nightly: the CHOSEN CONFIG CHANGED (see $REPORTS/history/)" >&2 ;;
  *) echo "tunebench nightly: history failed with exit $status" >&2 ;;
esac
exit "$status"
