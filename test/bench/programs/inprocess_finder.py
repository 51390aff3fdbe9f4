"""In-process batch-size finders, ported from their documented algorithms, on cnn_embedding.py's model.

  binsearch  Lightning's BatchSizeFinder(mode="binsearch"): from init_val, run steps_per_trial steps;
             double while it fits, then bisect between the last fit and the first failure; the
             answer is the last fit reduced by `margin`.
  shrink     Accelerate's find_executable_batch_size: from start, multiply by 0.9 after each OOM;
             the first batch that runs is the answer.

Both run in this one process (an OOM is caught, the memory freed, the search goes on), as they do in a
training script. Prints one JSON line: {"finder", "answer", "trials", "seconds", "error"}.
Usage: inprocess_finder.py binsearch|shrink [--init 2] [--steps 3] [--margin 0.05] [--start 128] [--max-trials 25]
"""

import argparse
import gc
import json
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from cnn_embedding import build  # noqa: E402


def is_oom(error):
    text = str(error)
    return isinstance(error, MemoryError) or "can't allocate memory" in text or "out of memory" in text


def main():
    p = argparse.ArgumentParser()
    p.add_argument("finder", choices=["binsearch", "shrink"])
    p.add_argument("--init", type=int, default=2)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--margin", type=float, default=0.05)
    p.add_argument("--start", type=int, default=128)
    p.add_argument("--max-trials", type=int, default=25)
    a = p.parse_args()
    t0 = time.monotonic()
    model, step, batch = build(torch, lambda name, default: default)
    trials = 0

    def fits(n):
        nonlocal trials
        trials += 1
        try:
            for i in range(a.steps):
                step(*batch(i, n))
            return True
        except (RuntimeError, MemoryError) as error:
            if not is_oom(error):
                raise
            gc.collect()
            return False

    answer, error = None, None
    try:
        if a.finder == "binsearch":
            n, low, high = a.init, None, None
            while trials < a.max_trials:
                if fits(n):
                    low = n
                    if high is None:
                        n *= 2
                    elif high - low <= 1:
                        break
                    else:
                        n = (low + high) // 2
                else:
                    high = n
                    if low is None:
                        break
                    if high - low <= 1:
                        break
                    n = (low + high) // 2
            answer = None if low is None else max(1, int(low * (1 - a.margin)))
        else:
            n = a.start
            while n >= 1:
                if fits(n):
                    answer = n
                    break
                n = int(n * 0.9)
    except BaseException as e:  # a crash of the finder itself is part of the result
        error = f"{type(e).__name__}: {e}"[:300]
    print(json.dumps({"finder": a.finder, "answer": answer, "trials": trials,
                      "seconds": time.monotonic() - t0, "error": error}), flush=True)


if __name__ == "__main__":
    main()
