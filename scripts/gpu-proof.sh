#!/usr/bin/env bash
# The GPU proof kit: proves tunebench's CUDA paths on a real card in one call of about 7 minutes.
#
#   scripts/gpu-proof.sh [--rehearse] [--only STEP[,STEP...]] [--out DIR] [--python PY] [--archive BUNDLE.tar.xz]
#
# Runs from an unpacked bundle (npm run bundle: Node.js is inside, none is needed on the machine) or
# from a checkout with a build (npm run build). In order, each step timed against its budget (on a card:
# gpu-proof/plan.json, costed from a real card's records), and skipped with its reason when it cannot run:
#   fixtures     nvidia-smi's fingerprint and telemetry queries (idle and under load), a real OOM and
#                its exit status, torch.cuda.mem_get_info, the versions        -> fixtures.tar.gz
#   max-batch    tunebench's max-batch stage on gpu-proof/proof_model.py, no host cap; then the max
#                and the next multiple run directly in fresh processes
#   finders      Lightning's BatchSizeFinder (binsearch) and Accelerate's find_executable_batch_size,
#                each in its own process; Lightning's answer then trains in a fresh process
#   allocator    empty_cache (never, every-step) and expandable_segments compared on alloc_churn.py,
#                a GPU-bound step whose tensors change shape every step
#   loader       a short DataLoader sweep (num_workers x pin_memory)
#   claims       (only with --only claims: it does not fit the default's 7 minutes) the seed claims that
#                need a GPU: empty_cache "5-10%" on alloc_churn.py and bf16 "2x" on the transformer
# --only STEP[,STEP...] runs those steps alone (a short call on a GPU machine). Each step writes its
# results as it ends, so a call cut short returns what finished. Writes at most 8 files into --out
# ($OUT when set, else ./gpu-proof-out): summary.md (the table, also printed), log.txt, fixtures.tar.gz,
# runs.tar.gz (each run's summary.md, trials.jsonl and run.json), finders.jsonl. Exits 1 when a step
# failed or ran over its budget. --rehearse runs the same steps on a CPU with small sizes, the recorded
# nvidia-smi output standing in for the real one, and checks the limits of what a lent GPU machine returns.
set -u -o pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
args=("$@")
rehearse=0
check=""
only=""
step_fn=""
out="${OUT:-}"
python=""
archive=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rehearse) rehearse=1 ;;
    --out) out="$2"; shift ;;
    --out=*) out="${1#--out=}" ;;
    --python) python="$2"; shift ;;
    --python=*) python="${1#--python=}" ;;
    --archive) archive="$2"; shift ;;
    --archive=*) archive="${1#--archive=}" ;;
    --check) check="$2"; shift ;;  # only check a folder against the limits of what comes back
    --only) only="$2"; shift ;;
    --only=*) only="${1#--only=}" ;;
    --step-fn) step_fn="$2"; shift ;;  # internal: one step's function, in a process group of its own (see step)
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-proof: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
# The limits of what a lent machine returns: at most 8 files of at most 16 MiB, no more than 2 folders
# down; and what travels (the bundle's archive) at most 64 MiB.
limits() {
  local dir="$1" bad=0 files f size
  files=$(find "$dir" -type f | wc -l)
  [ "$files" -le 8 ] || { echo "gpu-proof: $files files in $dir, more than the 8 that come back" >&2; bad=1; }
  while IFS= read -r f; do
    size=$(stat -c %s "$f")
    [ "$size" -le $((16 * 1024 * 1024)) ] || { echo "gpu-proof: $f is $((size / 1024 / 1024)) MiB, over the 16 MiB a file that comes back may have" >&2; bad=1; }
  done < <(find "$dir" -type f)
  [ -z "$(find "$dir" -mindepth 4 -type f)" ] || { echo "gpu-proof: files more than 2 folders down in $dir do not come back" >&2; bad=1; }
  if [ -n "$archive" ]; then
    size=$(stat -c %s "$archive") || return 1
    echo "gpu-proof: the bundle that travels is $((size / 1024 / 1024)) MiB ($archive)"
    [ "$size" -le $((64 * 1024 * 1024)) ] || { echo "gpu-proof: $archive is over the 64 MiB that may travel" >&2; bad=1; }
  fi
  return "$bad"
}
if [ -n "$check" ]; then limits "$check"; exit $?; fi
out="${out:-$PWD/gpu-proof-out}"
mkdir -p "$out" || { echo "gpu-proof: cannot create $out" >&2; exit 2; }
out="$(cd "$out" && pwd)"
if [ -z "$step_fn" ]; then
  work="$(mktemp -d "${TMPDIR:-/tmp}/gpu-proof.XXXXXX")"
  export GPU_PROOF_WORK="$work"
  trap 'rm -rf "$work"' EXIT
  exec > >(tee "$out/log.txt") 2>&1
else
  work="$GPU_PROOF_WORK"
fi

# tunebench: the bundle's launcher (its own Node.js), else a checkout's build with the Node.js on PATH.
if [ -x "$here/tunebench" ]; then
  tunebench=("$here/tunebench")
  export PATH="$here/node/bin:$PATH"
elif [ -f "$here/dist/harness/cli/main.js" ] && command -v node >/dev/null; then
  tunebench=(node "$here/dist/harness/cli/main.js")
else
  echo "gpu-proof: no tunebench here: run it from an unpacked bundle (npm run bundle) or a built checkout (npm run build)" >&2
  exit 2
fi
# Python: the one given, else the first python3 that imports torch (Debian's holds python3-torch here).
# Found once: a step gets it from the kit that started it (importing torch takes a second or more).
if [ -n "$step_fn" ]; then
  python="$GPU_PROOF_PYTHON"
elif [ -n "$python" ]; then
  "$python" -c 'import torch' 2>/dev/null || python=""
else
  for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import torch' 2>/dev/null; then python="$(command -v "$candidate")"; break; fi
  done
fi
if [ -z "$python" ]; then
  echo "gpu-proof: no Python with torch found; pass --python /path/to/python3" >&2
  exit 2
fi
export GPU_PROOF_PYTHON="$python"
kit="$here/gpu-proof"
if [ "$rehearse" = 1 ]; then
  # The recorded nvidia-smi output stands in for the real one; the CPU stands in for the card.
  # (the bundle carries them under gpu-proof/rehearsal/, a checkout has them under test/fixtures/)
  recorded="$kit/rehearsal"
  [ -d "$recorded" ] || recorded="$here/test/fixtures"
  export PATH="$recorded/bin:$PATH"
  export FAKE_NVIDIA_SMI_DIR="$recorded/nvidia-smi"
  device=cpu
  # About a minute in all. Dim 8: on the CPU a step's time grows with the square of the width and its
  # memory with the width, so a narrow model fills the cap's ~90 MiB above torch's own address space in
  # the fewest seconds (dim 32 took 3 to 4 times as long per MiB); a multiple of 512 (max ~8000) keeps
  # the runs until memory flattens to two or three. The cap stays: one more glibc arena reserves 64 MiB.
  dims=(--dim 8 --seq 8 --layers 2)
  params="dim: 8, seq: 8, layers: 2, device: cpu"
  cap="memory: 720MiB, mechanism: prlimit, "
  multiple=512; survive_steps=10; repeats=0; confirm=3; pairs=3; compare_repeats=1; compare_rounds=3
  # The CNN's CPU work, cut: 16-pixel images, 32 a batch and 4 steps in the compares; claims keep 3 pairs
  # (with 2 a claim gets no CI).
  compare_steps=4; load=(1); image="image_size: 16, "; allocator_batch=4
  churn="dim: 16, layers: 2, seq_min: 4, seq_max: 32, "
  workers="[0, 1]"
  shrink=(-e 's/augment: 6/augment: 1/' -e 's/steps: 12 }/steps: 4 }/' -e 's/image_size: 32/image_size: 16/')
  budget_of() { case "$1" in fixtures) echo 60 ;; max-batch) echo 150 ;; finders) echo 60 ;; allocator) echo 150 ;; loader) echo 90 ;; claims) echo 150 ;; esac; }
  default_steps="fixtures,max-batch,finders,allocator,loader,claims"
else
  device=cuda
  # A narrow model: at the memory limit a step's time grows with the width, so dim 512 keeps a 50-step
  # direct run at the max to seconds on an H100 (about 0.3 s a step, from 6 x 17M parameters x ~440k tokens).
  dims=(--dim 512 --seq 256 --layers 8)
  params="dim: 512, seq: 256, layers: 8, device: cuda"
  cap=""
  # Sized from a real card's records (gpu-proof/plan.json; a test checks its arithmetic). The max-batch
  # stage as bench:gpu-replay measures it on the recorded H200: an in-process bracket (bracket: auto on a
  # GPU with warm start), then the confirmation (until memory flattens: at least 10 flat readings past an
  # epoch boundary, whatever confirm_steps) and the next multiple, each a fork. No boundary repeats: the
  # band model lowers a sharp boundary by ~4% on so few runs.
  plan() { "$python" -c "import json,sys; p=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'p': p}))" "$kit/plan.json" "$1"; }
  setting() { plan "p['settings']['$1']"; }
  multiple=$(setting multiple); survive_steps=$(setting survive_steps); repeats=$(setting repeat_boundary)
  confirm=$(setting confirm_steps); pairs=$(setting claim_pairs); compare_repeats=1; compare_rounds=$(setting compare_rounds)
  compare_steps=$(setting compare_steps); load=(3); image=""; allocator_batch=16
  churn="dim: 2048, layers: 4, seq_min: 128, seq_max: 2048, "
  workers="[0, 4]"
  shrink=()
  budget_of() { plan "[s['budget_s'] for s in p['steps'] if s['name'] == '$1'][0]"; }
  default_steps=$(plan "','.join(s['name'] for s in p['steps'] if s['default'])")
fi
[ -n "$step_fn" ] || echo "gpu-proof: $([ "$rehearse" = 1 ] && echo rehearsal on the CPU || echo on the GPU), python $python, results in $out"

summary="$work/summary.tsv"
# step NAME SECONDS FUNCTION: runs FUNCTION in this script started again under `timeout` (a process
# group of its own: at the limit every process of the step gets SIGTERM, tunebench saves its run, and
# SIGKILL follows 15 s later). The step's last line on fd 5 is its detail; exit 75 means skipped.
step() {
  local name="$1" limit="$2" fn="$3" t0 rc detail status=ok
  echo "== $name (at most ${limit} s)"
  t0=$(date +%s%N)
  : >"$work/detail"
  timeout -k 15 "$limit" bash "$0" "${args[@]}" --step-fn "$fn" 5>"$work/detail"
  rc=$?
  detail="$(tail -n 1 "$work/detail")"
  if [ "$rc" = 75 ]; then status=skipped
  elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then status="timed out"; detail="${detail:+$detail; }over its ${limit} s"
  elif [ "$rc" != 0 ]; then status="failed ($rc)"; detail="${detail:-exit status $rc}"; fi
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  printf '%s\t%s\t%d.%d\t%s\t%s\n' "$name" "$status" $((ms / 1000)) $((ms % 1000 / 100)) "$limit" "$detail" >>"$summary"
}
skip() { echo "$1" >&5; exit 75; }
json() { "$python" -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$@"; }

# An experiment file of the kit's own: the workloads by absolute path, the interpreter found above.
experiment() { # NAME WORKLOAD PARAMS STAGES
  cat >"$work/$1.yaml" <<EOF
name: $1
seed: 1
workload:
  kind: command
  python: $python
  command: [$2]
  protocol: required
  warm_start: fork
  params: { $3 }
limits: { ${cap}timeout: 120s }
measure: { warmup_steps: 1, steps: 3 }
stages:
$4
EOF
}
run() { "${tunebench[@]}" run "$work/$1.yaml" --out "$work/runs" --json >"$work/$1.json"; }

fixtures() {
  local f="$work/fixtures" i
  mkdir -p "$f"
  if command -v nvidia-smi >/dev/null; then
    echo "fixtures: nvidia-smi's fingerprint and an idle sample"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader,nounits >"$f/info.csv" 2>&1
    nvidia-smi --query-gpu=index,name,utilization.gpu,memory.used,memory.total,power.draw,clocks.sm \
      --format=csv,noheader,nounits >"$f/samples-idle.csv" 2>&1
    nvidia-smi >"$f/nvidia-smi.txt" 2>&1
  else
    echo "nvidia-smi is not on PATH" >"$f/info.csv"
  fi
  # One CUDA child: versions and mem_get_info, load[0] s of matrix products (sampled here once they
  # start), then an uncaught OOM. It writes its files as it goes: a cut step keeps what it made.
  echo "fixtures: one process starts CUDA, loads the card for ${load[0]} s, then fills it until it runs out"
  local cpu=()
  [ "$rehearse" = 1 ] && cpu=(--cpu)
  "$python" "$kit/fixtures.py" "$f" --load "${load[0]}" "${cpu[@]}" &
  local child=$!
  for ((i = 0; i < 600; i++)); do { [ -f "$f/loading" ] || ! kill -0 "$child" 2>/dev/null; } && break; sleep 0.1; done
  if command -v nvidia-smi >/dev/null && [ -f "$f/loading" ]; then
    timeout "${load[0]}" nvidia-smi --query-gpu=index,name,utilization.gpu,memory.used,memory.total,power.draw,clocks.sm \
      --format=csv,noheader,nounits --loop-ms=500 >"$f/samples-load.csv" 2>&1
  fi
  wait "$child" || return 1
  rm -f "$f/loading"
  tar -czf "$out/fixtures.tar.gz" -C "$work" fixtures
  echo "$(head -n 1 "$f/info.csv"); OOM exit status $(json "$f/oom.json" "d['exit_status']")" >&5
}

max_batch() {
  experiment max-batch "$kit/proof_model.py" "$params" "  - kind: max-batch
    multiple_of: $multiple
    start: 64
    ceiling: 1048576
    steps: 2
    confirm_steps: $confirm
    repeat_boundary: $repeats
    throughput_points: 0
    choose: max"
  run max-batch || return 1
  local max
  max=$(json "$work/max-batch.json" "d['stages'][0]['result']['max']")
  [ "$max" != None ] || { echo "no max" >&5; return 1; }
  echo "$max" >"$work/max"
  # The boundary, run directly: the max must run, the next multiple must fail.
  local at above prl=()
  [ "$rehearse" = 1 ] && prl=(prlimit --as=$((720 * 1024 * 1024)) --)
  at=$("${prl[@]}" "$python" "$kit/proof_model.py" --direct "$max" --steps "$survive_steps" "${dims[@]}" --device "$device" | tail -n 1)
  above=$("${prl[@]}" "$python" "$kit/proof_model.py" --direct $((max + multiple)) --steps "$survive_steps" "${dims[@]}" --device "$device" | tail -n 1)
  echo "$at" >>"$out/finders.jsonl"
  echo "$above" >>"$out/finders.jsonl"
  # Where the time went, summed over the stage's trials (their timelines, docs/max-batch.md).
  local spent
  spent=$(json "$work/max-batch.json" "(lambda ts: ', '.join(f'{k} {sum((t.get(\"timeline\") or {}).get(k) or 0 for t in ts):.1f} s' for k in ('setup','build','warmup','steps','harness')) + f'; {sum(len(t.get(\"attempts\") or []) for t in ts)} in-process attempts')([__import__('json').loads(l) for l in open(d['run_dir'] + '/trials.jsonl')])")
  echo "time: $spent"
  echo "max $max in $(json "$work/max-batch.json" "round(d['wall_seconds'])") s ($spent); direct: $max $(echo "$at" | grep -q '"ok": true' && echo ran || echo FAILED) $survive_steps steps, $((max + multiple)) $(echo "$above" | grep -q '"oom": true' && echo failed || echo 'did not fail')" >&5
}

finders() {
  local line answers=""
  for finder in lightning accelerate; do
    line=$("$python" "$kit/finders.py" "$finder" "${dims[@]}" --device "$device" | tail -n 1)
    echo "$line" >>"$out/finders.jsonl"
    local answer
    answer=$(echo "$line" | "$python" -c "import json,sys; d=json.loads(sys.stdin.read() or '{}'); print(d.get('answer') or '')")
    # Lightning's answer trains directly (the plan has no room for Accelerate's, 76% of the max on the H200).
    if [ -n "$answer" ] && [ "$finder" = lightning ]; then
      local survived
      survived=$("$python" "$kit/proof_model.py" --direct "$answer" --steps "$survive_steps" "${dims[@]}" --device "$device" | tail -n 1)
      echo "$survived" >>"$out/finders.jsonl"
      answers="$answers $finder $answer ($(echo "$survived" | grep -q '"ok": true' && echo held || echo 'did not hold') $survive_steps steps);"
    elif [ -n "$answer" ]; then
      answers="$answers $finder $answer;"
    else
      answers="$answers $finder: $(echo "$line" | "$python" -c "import json,sys; d=json.loads(sys.stdin.read() or '{}'); print(d.get('skipped') or d.get('error') or 'no answer')");"
    fi
  done
  [ -f "$work/max" ] && answers="$answers tunebench $(cat "$work/max")"
  echo "${answers# }" >&5
  # Neither library here (the rehearsal machine has neither): the step is skipped, with the reasons.
  grep -q '"skipped"' <(tail -n 2 "$out/finders.jsonl") && ! grep -q '"answer": [0-9]' <(tail -n 2 "$out/finders.jsonl") && exit 75
  return 0
}

allocator() {
  # alloc_churn.py: a GPU-bound step whose tensors change shape every step, timed on the device, so that
  # the caching allocator (and emptying it) decides the step's time, not the host.
  experiment allocator "$here/experiments/workloads/alloc_churn.py" "device: $device, ${churn}batch_size: $allocator_batch" "  - kind: compare
    name: empty-cache
    param: empty_cache
    arms: [never, every-step]
    baseline: never
    repeats: $compare_repeats
    max_rounds: $compare_rounds
    steps: $compare_steps
  - kind: compare
    name: alloc-conf
    param: alloc_conf
    arms: ['', 'expandable_segments:True']
    baseline: ''
    repeats: $compare_repeats
    max_rounds: $compare_rounds
    steps: $compare_steps"
  run allocator || return 1
  "$python" - "$work/allocator.json" >&5 <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
# Notes are typed (a kind and its figures; run.json format 3): the first one, as its fields.
def first_note(s):
    n = (s.get("notes") or ["-"])[0]
    return (n if isinstance(n, str) else json.dumps(n, separators=(",", ":")))[:120]
print("; ".join(f"{s['name']}: {json.dumps(s.get('chosen'))} ({first_note(s)})" for s in run["stages"]))
PY
}

claims() {
  # The seed claims that need a GPU, from the files as shipped: the empty_cache claim on alloc_churn.py (a
  # GPU-bound step, as the seed's), the bf16 claim on the transformer; warm-started, claim_pairs pairs.
  mkdir -p "$work/claims"
  sed -e "s#python: /usr/bin/python3#python: $python#" -e 's#^\$schema: .*##' \
    -e "s#command: \[\.\./workloads/torch_cnn\.py\]#command: [$here/experiments/workloads/alloc_churn.py]#" \
    -e "s#  params: {.*}#  params: { ${churn}batch_size: $allocator_batch, device: $device }\n  warm_start: fork#" \
    -e "s#steps: 12 }#steps: $compare_steps }#" \
    "$here/experiments/claims/empty-cache.yaml" >"$work/claims/empty-cache.yaml"
  sed -e "s#python: /usr/bin/python3#python: $python#" -e "s#\.\./workloads/#$here/experiments/workloads/#" \
    -e 's#^\$schema: .*##' -e 's#^  protocol: required#  protocol: required\n  warm_start: fork#' "${shrink[@]}" \
    "$here/experiments/claims/gpu-bf16.yaml" >"$work/claims/gpu-bf16.yaml"
  "${tunebench[@]}" claims "$work/claims" --max-pairs "$pairs" --out "$work/runs" --json >"$work/claims.json" || return 1
  "$python" - "$work/claims.json" >&5 <<'PY'
import json, sys
claims = json.load(open(sys.argv[1]))
print("; ".join(f"{c['claim']} {c['change']} {c['measured']} {c['verdict']}" for c in claims))
PY
}

loader() {
  local b=64
  [ -f "$work/max" ] && b=$(( $(cat "$work/max") / 4 / multiple * multiple )); [ "$b" -ge "$multiple" ] || b=$multiple
  experiment loader "$here/experiments/workloads/torch_cnn.py" "device: $device, ${image}batch_size: 64, augment: 3, epochs: 1" "  - kind: sweep
    params:
      num_workers: $workers
      pin_memory: [false, true]
    strategy: grid
    repeats: 1"
  run loader || return 1
  echo "chosen $(json "$work/loader.json" "d['chosen']")" >&5
}

if [ -n "$step_fn" ]; then "$step_fn"; exit $?; fi

# What comes back, rewritten after every step (a call cut short still returns what finished): the table,
# the fixtures made so far, and each run's summary.md, trials.jsonl and run.json.
collect() {
  if [ -d "$work/runs" ]; then
    (cd "$work/runs" && find . \( -name summary.md -o -name trials.jsonl -o -name run.json \) -print0 |
      tar -czf "$out/runs.tar.gz" --null -T -)
  fi
  [ -f "$out/fixtures.tar.gz" ] || [ ! -d "$work/fixtures" ] || tar -czf "$out/fixtures.tar.gz" -C "$work" fixtures
  {
    echo "| step | status | seconds | budget | detail |"
    echo "| --- | --- | --- | --- | --- |"
    while IFS=$'\t' read -r name status seconds budget detail; do echo "| $name | $status | $seconds | $budget | $detail |"; done <"$summary"
  } >"$out/summary.md"
}

steps="${only:-$default_steps}"
for name in ${steps//,/ }; do
  case "$name" in
    fixtures|max-batch|finders|allocator|loader|claims) ;;
    *) echo "gpu-proof: unknown step '$name' in --only (the steps: fixtures, max-batch, finders, allocator, loader, claims)" >&2; exit 2 ;;
  esac
done
: >"$summary"
for name in ${steps//,/ }; do
  step "$name" "$(budget_of "$name")" "${name//-/_}"
  collect
done
cat "$out/summary.md"

problems=0
limits "$out" || problems=1
# Every step must run or be skipped with a reason, within its budget: on the card as in the rehearsal.
if awk -F'\t' '$2 != "ok" && $2 != "skipped" { bad = 1 } END { exit !bad }' "$summary"; then
  echo "gpu-proof: a step failed or ran over its budget (see the table)" >&2
  problems=1
fi
exit "$problems"
