"""A simulated CUDA workload that replays a real card's records (bench:gpu-replay): the memory each batch
needs, the card's limit, the step and warm-up times and the per-process cost of a process that starts CUDA,
all from ../shared/gpu-records (the bench turns them into the replay file; nothing here is invented).

It speaks the protocol through tunebench.main (warm start and bracket sessions included): setup() costs
what the recorded warm server's imports cost; the first use of the "device" in a process costs the
recorded per-process time; each step sleeps the recorded step time at that batch and reports the recorded
device memory; above the card's limit the first step raises the recorded CUDA OOM message.

  config: batch_size; environment: CUDA_REPLAY (the replay file), CUDA_REPLAY_SCALE (every sleep
  multiplied by it; 1, the default, is real time)
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "harness", "workloads", "python"))
import tunebench  # noqa: E402

_device_ready = False  # the first use of the device in this process pays the per-process cost


def interpolate(points, x):
    """Linear through the recorded points, extended past either end by its outer segment."""
    pts = sorted((float(a), float(b)) for a, b in points)
    if len(pts) == 1:
        return pts[0][1]
    for i, ((x0, y0), (x1, y1)) in enumerate(zip(pts, pts[1:])):
        if x <= x1 or i == len(pts) - 2:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return pts[-1][1]


def memory_for(spec, batch):
    base = interpolate(spec["memory"], batch)
    bend = spec.get("bend")
    if bend:  # memory that grows faster than the line near the top: factor above the line at bend["at"]
        base *= 1 + bend["factor"] * (batch / bend["at"]) ** 2
    return int(base)


def setup():
    # The warm server has no trial config: the replay file and the scale come from workload.env.
    spec = json.load(open(os.environ["CUDA_REPLAY"], encoding="utf-8"))
    time.sleep(spec["setup_seconds"] * float(os.environ.get("CUDA_REPLAY_SCALE", "1")))
    return spec


def train(spec):
    global _device_ready
    cfg = tunebench.config()
    scale = float(os.environ.get("CUDA_REPLAY_SCALE", "1"))
    batch = cfg.batch_size
    events = tunebench.Events()
    if not _device_ready:
        time.sleep(spec["process_seconds"] * scale)
        _device_ready = True
    need = memory_for(spec, batch)
    warm = interpolate(spec["warmup_seconds"], batch)
    if need > spec["limit_bytes"]:
        time.sleep(warm * scale)
        raise RuntimeError(spec["oom_message"])
    timer = tunebench.StepTimer(events, device_type="cpu")  # for the trial's steps and epochs only
    step = interpolate(spec["step_seconds"], batch)
    total = timer.total_steps or 0
    per_epoch = -(-total // (timer.epochs or 1))
    for i in range(total):
        seconds = (warm if i < timer.warmup_steps else step) * scale
        time.sleep(seconds)
        events.emit({"event": "step", "samples": batch, "seconds": seconds, "data_wait_seconds": 0.0,
                     "warmup": i < timer.warmup_steps, "epoch": i // per_epoch, "t": time.time(),
                     "memory_bytes": need, "device": "cuda"})
    events.emit({"event": "memory", "peak_bytes": need, "device": "cuda"})
    events.emit({"event": "done", "t": time.time()})


if __name__ == "__main__":
    tunebench.main(train, setup=setup)
