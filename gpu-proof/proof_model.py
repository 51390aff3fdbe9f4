"""The GPU proof kit's model: one script that tunebench's max-batch stage, the in-process finders
(finders.py) and the fresh-process survival runs all train, so that their answers are comparable.

A residual MLP over token sequences (Linear D->4D, GELU, Linear 4D->D, LayerNorm per layer) trained
with AdamW on synthetic batches made on the device: its memory grows with the batch and its steps
are matrix products, so a card runs out of memory within seconds of a search.

  under tunebench (TUNEBENCH_CONFIG set):  tunebench.main(train); config: batch_size, dim, seq,
                                           layers, device (auto | cpu | cuda)
  direct:  proof_model.py --direct BATCH [--steps 50] [--dim D --seq S --layers L --device cuda]
           trains BATCH for --steps steps in this fresh process and prints one JSON line
           {"batch", "steps", "ok", "oom", "seconds", "error"}; exit 0 when every step ran, 86 on an OOM.
"""

import argparse
import json
import os
import sys
import time

OOM_EXIT = 86
# The adapter beside the kit (a checkout's or the bundle's): its is_oom() is the harness's own OOM test.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness", "workloads", "python"))


def build(torch, dim, seq, layers, device):
    """(model, optimizer, step(batch, i)) for the given sizes; step runs forward, backward, AdamW."""
    from torch import nn  # noqa: PLC0415

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.Linear(dim, 4 * dim)
            self.down = nn.Linear(4 * dim, dim)
            self.norm = nn.LayerNorm(dim)

        def forward(self, x):
            return self.norm(x + self.down(nn.functional.gelu(self.up(x))))

    model = nn.Sequential(*[Block() for _ in range(layers)], nn.Linear(dim, 16)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(batch, i):
        g = torch.Generator(device=device).manual_seed(i)
        x = torch.randn(batch, seq, dim, device=device, generator=g)
        y = torch.randint(0, 16, (batch, seq), device=device, generator=g)
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x).reshape(-1, 16), y.reshape(-1))
        loss.backward()
        optimizer.step()
        return loss

    return model, optimizer, step


def pick_device(torch, wanted):
    if wanted == "auto":
        wanted = "cuda" if torch.cuda.is_available() else "cpu"
    if wanted == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True  # what a training script on an H100 sets
        torch.backends.cudnn.allow_tf32 = True
    return torch.device(wanted)


def under_tunebench():
    import tunebench  # noqa: PLC0415

    def preload():
        # Under warm_start: fork the import runs once in the server; CUDA starts in each forked trial.
        import torch  # noqa: PLC0415

        return torch

    def train(torch):
        cfg = tunebench.config()
        device = pick_device(torch, cfg.get_str("device", "auto"))
        _, _, step = build(torch, cfg.get_int("dim", 1024), cfg.get_int("seq", 256), cfg.get_int("layers", 8), device)
        timer = tunebench.StepTimer(torch=torch, device_type=device.type)
        batch = cfg.batch_size
        for i in timer.batches(range(10**9)):
            with timer.step(samples=batch):
                step(batch, int(i)).item()
        timer.finish()

    tunebench.main(train, setup=preload)


def direct(a):
    import torch  # noqa: PLC0415

    t0 = time.monotonic()
    done, error, oom = 0, None, False
    try:
        device = pick_device(torch, a.device)
        _, _, step = build(torch, a.dim, a.seq, a.layers, device)
        for i in range(a.steps):
            step(a.direct, i).item()
            done += 1
    except (RuntimeError, MemoryError) as e:
        import tunebench  # noqa: PLC0415 - its OOM patterns agree with the harness's (python-adapter test)

        oom = tunebench.is_oom(e)
        error = f"{type(e).__name__}: {e}"[:400]
        if not oom:
            raise
    print(json.dumps({"batch": a.direct, "steps": done, "ok": done == a.steps, "oom": oom,
                      "seconds": round(time.monotonic() - t0, 2), "error": error}), flush=True)
    return 0 if done == a.steps else OOM_EXIT


def arguments(argv=None):
    p = argparse.ArgumentParser(description="the GPU proof kit's model")
    p.add_argument("--direct", type=int, help="train this batch in this process, outside tunebench")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--device", default="auto")
    return p.parse_args(argv)


if __name__ == "__main__":
    if os.environ.get("TUNEBENCH_CONFIG") is not None or os.environ.get("TUNEBENCH_WARM_SERVER"):
        under_tunebench()
    else:
        sys.exit(direct(arguments()))
