#!/usr/bin/env bash
# The GPU proof kit: proves tunebench's CUDA paths on a real card in one call of about 7 minutes.
#
#   scripts/gpu-proof.sh [--rehearse] [--out DIR] [--python PY] [--archive BUNDLE.tar.xz]
#
# Runs from an unpacked bundle (npm run bundle: Node.js is inside, none is needed on the machine) or
# from a checkout with a build (npm run build). In order, each step timed, and skipped with its reason
# when it cannot run:
#   1 fixtures     nvidia-smi's fingerprint and telemetry queries (idle and under load), a real OOM and
#                  its exit status, torch.cuda.mem_get_info, the versions        -> fixtures.tar.gz
#   2 max-batch    tunebench's max-batch stage on gpu-proof/proof_model.py, no host cap; then the max
#                  and the next multiple run directly in fresh processes
#   3 finders      Lightning's BatchSizeFinder (binsearch) and Accelerate's find_executable_batch_size,
#                  each in its own process; every answer then trains 50 steps in a fresh process
#   4 allocator    the four empty_cache policies and expandable_segments compared, and the seed claims
#                  that need a GPU (gpu-bf16, empty-cache)
#   5 loader       a short DataLoader sweep (num_workers x pin_memory)
# Writes at most 8 files into --out ($OUT when set, else ./gpu-proof-out): summary.md (the table, also
# printed), log.txt, fixtures.tar.gz, runs.tar.gz (each run's summary.md, trials.jsonl and run.json),
# finders.jsonl. --rehearse runs the same steps on a CPU with small sizes, the recorded nvidia-smi
# output standing in for the real one, and checks the limits of what a lent GPU machine returns.
set -u -o pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
args=("$@")
rehearse=0
check=""
only=""
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
    --only) only="$2"; shift ;;  # internal: one step, in a process group of its own (see step)
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
if [ -z "$only" ]; then
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
if [ -n "$only" ]; then
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
  compare_steps=4; load=(2 1 1); image="image_size: 16, "; allocator_batch=32
  shrink=(-e 's/augment: 6/augment: 1/' -e 's/steps: 12 }/steps: 4 }/' -e 's/image_size: 32/image_size: 16/')
  budget=(60 150 60 150 90)
else
  device=cuda
  # A narrow model: at the memory limit a step's time grows with the width, so dim 512 keeps a 50-step
  # direct run at the max to seconds on an H100 (about 0.3 s a step, from 6 x 17M parameters x ~440k tokens).
  dims=(--dim 512 --seq 256 --layers 8)
  params="dim: 512, seq: 256, layers: 8, device: cuda"
  cap=""
  # The max-batch stage as bench:gpu-replay measures it on the recorded H200: an in-process bracket
  # (bracket: auto on a GPU with warm start), then the confirmation (until memory flattens: at least
  # 10 flat readings past an epoch boundary, whatever confirm_steps) and the next multiple, each a fork.
  # No boundary repeats: the band model lowers a sharp boundary by ~4% on so few runs.
  multiple=8; survive_steps=50; repeats=0; confirm=1; pairs=4; compare_repeats=1; compare_rounds=3
  compare_steps=10; load=(5 2 3); image=""; allocator_batch=128
  shrink=()
  budget=(30 140 90 180 40)  # 480 s: the claims and compares of step 4 are the longest part
fi
[ -n "$only" ] || echo "gpu-proof: $([ "$rehearse" = 1 ] && echo rehearsal on the CPU || echo on the GPU), python $python, results in $out"

summary="$work/summary.tsv"
# step NAME SECONDS FUNCTION: runs FUNCTION in this script started again under `timeout` (a process
# group of its own: at the limit every process of the step gets SIGTERM, tunebench saves its run, and
# SIGKILL follows 15 s later). The step's last line on fd 5 is its detail; exit 75 means skipped.
step() {
  local name="$1" limit="$2" fn="$3" t0 rc detail status=ok
  echo "== $name (at most ${limit} s)"
  t0=$(date +%s%N)
  : >"$work/detail"
  timeout -k 15 "$limit" bash "$0" "${args[@]}" --only "$fn" 5>"$work/detail"
  rc=$?
  detail="$(tail -n 1 "$work/detail")"
  if [ "$rc" = 75 ]; then status=skipped
  elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then status="timed out"; detail="${detail:+$detail; }over its ${limit} s"
  elif [ "$rc" != 0 ]; then status="failed ($rc)"; detail="${detail:-exit status $rc}"; fi
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  printf '%s\t%s\t%d.%d\t%s\n' "$name" "$status" $((ms / 1000)) $((ms % 1000 / 100)) "$detail" >>"$summary"
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
  local f="$work/fixtures"
  mkdir -p "$f"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader,nounits >"$f/info.csv" 2>&1
    nvidia-smi --query-gpu=index,name,utilization.gpu,memory.used,memory.total,power.draw,clocks.sm \
      --format=csv,noheader,nounits >"$f/samples-idle.csv" 2>&1
    nvidia-smi >"$f/nvidia-smi.txt" 2>&1
    # Under load: a matrix-product loop on the device (load[0] s) while the telemetry query samples it
    # (for load[2] s, from load[1] s after the start).
    "$python" -c "import torch,time
d='cuda' if torch.cuda.is_available() else 'cpu'; a=torch.randn(8192 if d=='cuda' else 256,8192 if d=='cuda' else 256,device=d); t=time.time()
while time.time()-t<${load[0]}: (a@a).sum().item()" &
    local loaded=$!
    sleep "${load[1]}"
    timeout "${load[2]}" nvidia-smi --query-gpu=index,name,utilization.gpu,memory.used,memory.total,power.draw,clocks.sm \
      --format=csv,noheader,nounits --loop-ms=500 >"$f/samples-load.csv" 2>&1
    wait "$loaded"
  else
    echo "nvidia-smi is not on PATH" >"$f/info.csv"
  fi
  "$python" "$kit/fixtures.py" "$f" || return 1
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
    if [ -n "$answer" ]; then
      local survived
      survived=$("$python" "$kit/proof_model.py" --direct "$answer" --steps "$survive_steps" "${dims[@]}" --device "$device" | tail -n 1)
      echo "$survived" >>"$out/finders.jsonl"
      answers="$answers $finder $answer ($(echo "$survived" | grep -q '"ok": true' && echo held || echo 'did not hold') $survive_steps steps);"
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
  experiment allocator "$here/experiments/workloads/torch_cnn.py" "device: $device, ${image}batch_size: $allocator_batch, augment: 1, epochs: 1" "  - kind: compare
    name: empty-cache
    param: empty_cache
    arms: [never, every-step, every-10, on-oom]
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
  mkdir -p "$work/claims"
  for c in gpu-bf16 empty-cache; do
    sed -e "s#python: /usr/bin/python3#python: $python#" -e "s#\.\./workloads/#$here/experiments/workloads/#" \
      -e 's#^\$schema: .*##' "${shrink[@]}" "$here/experiments/claims/$c.yaml" >"$work/claims/$c.yaml"
  done
  "${tunebench[@]}" claims "$work/claims" --max-pairs "$pairs" --out "$work/runs" --json >"$work/claims.json" || return 1
  "$python" - "$work/allocator.json" "$work/claims.json" >&5 <<'PY'
import json, sys
run, claims = (json.load(open(p)) for p in sys.argv[1:3])
stages = "; ".join(f"{s['name']}: {json.dumps(s.get('chosen'))}" for s in run["stages"])
verdicts = "; ".join(f"{c['claim']} {c['change']} {c['measured']} {c['verdict']}" for c in claims)
print(f"{stages}; claims: {verdicts}")
PY
}

loader() {
  local b=64
  [ -f "$work/max" ] && b=$(( $(cat "$work/max") / 4 / multiple * multiple )); [ "$b" -ge "$multiple" ] || b=$multiple
  local workers="[0, 2, 4, 8]"
  [ "$rehearse" = 1 ] && workers="[0, 1]"
  experiment loader "$here/experiments/workloads/torch_cnn.py" "device: $device, ${image}batch_size: 64, augment: 3, epochs: 1" "  - kind: sweep
    params:
      num_workers: $workers
      pin_memory: [false, true]
    strategy: grid
    repeats: 1"
  run loader || return 1
  echo "chosen $(json "$work/loader.json" "d['chosen']")" >&5
}

if [ -n "$only" ]; then "$only"; exit $?; fi
: >"$summary"
step fixtures "${budget[0]}" fixtures
step max-batch "${budget[1]}" max_batch
step finders "${budget[2]}" finders
step allocator "${budget[3]}" allocator
step loader "${budget[4]}" loader

# What comes back: each run's summary.md, trials.jsonl and run.json.
if [ -d "$work/runs" ]; then
  (cd "$work/runs" && find . \( -name summary.md -o -name trials.jsonl -o -name run.json \) -print0 |
    tar -czf "$out/runs.tar.gz" --null -T -)
fi
{
  echo "| step | status | seconds | detail |"
  echo "| --- | --- | --- | --- |"
  while IFS=$'\t' read -r name status seconds detail; do echo "| $name | $status | $seconds | $detail |"; done <"$summary"
} >"$out/summary.md"
cat "$out/summary.md"

problems=0
limits "$out" || problems=1
# A rehearsal passes only when every step ran or was skipped with a reason.
if [ "$rehearse" = 1 ] && awk -F'\t' '$2 != "ok" && $2 != "skipped" { bad = 1 } END { exit !bad }' "$summary"; then
  echo "gpu-proof: a step of the rehearsal failed (see the table)" >&2
  problems=1
fi
exit "$problems"
