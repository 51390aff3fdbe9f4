"""Reference workload for the caching allocator: a GPU-bound training step whose tensors change shape
every step, so that the allocator's cache is what decides its speed (torch.cuda.empty_cache() then
forces real cudaFree/cudaMalloc, as in the seed where it was called 900 times a run).

Each step draws a sequence length from a seeded cycle of `lengths` between seq_min and seq_max, makes
its batch on the device (no data loader: nothing waits on the CPU), runs `layers` residual MLP blocks
forward and backward with AdamW, and frees every activation: the next step asks for blocks of other
sizes. Steps are timed on the device (the adapter's StepTimer synchronizes), so a trial's time is its
steps, not the host. The empty_cache policy, precision and allocator settings (alloc_conf) come from
the config, as in the other reference workloads (training.py).

Parameters: batch_size (16), dim (1024), layers (4), seq_min (64), seq_max (1024), lengths (7), empty_cache,
precision, alloc_conf, device (auto | cpu | cuda), seed.
"""

import tunebench
import training


def build(cfg, torch, device):
    from torch import nn  # noqa: PLC0415

    dim = cfg.get_int("dim", 1024)
    layers = cfg.get_int("layers", 4)
    if dim < 8 or layers < 1:
        tunebench.reject(f"dim >= 8 and layers >= 1 expected, got dim={dim}, layers={layers}")

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.Linear(dim, 4 * dim)
            self.down = nn.Linear(4 * dim, dim)
            self.norm = nn.LayerNorm(dim)

        def forward(self, x):
            return self.norm(x + self.down(nn.functional.gelu(self.up(x))))

    return nn.Sequential(*[Block() for _ in range(layers)], nn.Linear(dim, 1)).to(device)


def lengths(cfg):
    """The cycle of sequence lengths: `lengths` values spread between seq_min and seq_max, none a multiple
    of another's block size, so that each step's tensors need blocks of new sizes."""
    low, high, n = cfg.get_int("seq_min", 64), cfg.get_int("seq_max", 1024), cfg.get_int("lengths", 7)
    if not 1 <= low <= high or n < 2:
        tunebench.reject(f"1 <= seq_min <= seq_max and lengths >= 2 expected, got {low}, {high}, {n}")
    return [low + (high - low) * i // (n - 1) + (i % 3) for i in range(n)]


def train(_state=None):
    cfg = tunebench.config()
    torch, device, allocator = training.setup(cfg)
    model = build(cfg, torch, device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    policy = tunebench.EmptyCachePolicy(cfg.get_str("empty_cache", "never"), torch=torch)
    autocast, scaler = tunebench.precision_context(cfg.get_str("precision", "fp32"), device.type, torch=torch)
    timer = tunebench.StepTimer(model=model, torch=torch)
    cycle = lengths(cfg)
    batch = cfg.batch_size or 16
    dim = cfg.get_int("dim", 1024)
    generator = torch.Generator(device=device).manual_seed(cfg.get_int("seed", 1))

    def step(i):
        seq = cycle[i % len(cycle)]
        x = torch.randn(batch, seq, dim, device=device, generator=generator)
        optimizer.zero_grad(set_to_none=True)
        with autocast:
            loss = model(x).float().pow(2).mean()
        return training.backward_step(loss, optimizer, scaler)

    for i in timer.batches(range(10**9)):
        with timer.step(samples=batch):
            policy.run(step, int(i))
        policy.after_step(timer.index - 1)
    timer.finish({
        "empty_cache_calls": policy.calls,
        "empty_cache_seconds": policy.seconds,
        "allocator_env": allocator,
        "torch": torch.__version__,
    })


if __name__ == "__main__":
    tunebench.main(lambda _: train(), setup=training.preload)
