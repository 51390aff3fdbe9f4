"""Reference workload for two code patterns from the seeds' write-ups, each with a before and an
after variant, timed per step through the tunebench adapter (torch on CPU or CUDA):

- pattern "tensor-creation": a forward pass that builds its position ids and attention mask with a
  tensor per sample in a Python loop (variant "loop", "240 tensors per batch") or once per batch
  with vectorised ops (variant "hoisted", "3 tensors per batch").
- pattern "collate": a collate function that appends per-sample values to Python lists and
  converts them at the end (variant "append") or fills a pre-allocated batch tensor in place
  (variant "preallocated"). The step is the collate of one batch.

Parameters: pattern, variant, batch_size (64), seq (128), dim (64), device (auto).
"""

import tunebench
import training


def run():
    cfg = tunebench.config()
    torch, device, _ = training.setup(cfg)
    pattern = cfg.get_str("pattern", "tensor-creation")
    variant = cfg.get_str("variant")
    batch, seq, dim = cfg.batch_size, cfg.get_int("seq", 128), cfg.get_int("dim", 64)
    timer = tunebench.StepTimer(device_type=device.type, torch=torch)
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(1, 1000, (batch, seq), generator=g)
    lengths = torch.randint(seq // 2, seq + 1, (batch,), generator=g).tolist()

    if pattern == "tensor-creation":
        if variant not in ("loop", "hoisted"):
            tunebench.reject(f"variant: expected loop or hoisted for tensor-creation, got {variant!r}")
        embed = torch.nn.Embedding(1000, dim).to(device)
        position = torch.nn.Embedding(seq, dim).to(device)
        x = tokens.to(device)

        def step():
            with torch.no_grad():
                if variant == "loop":
                    # Per sample: position ids, a mask and a scale, each a new tensor.
                    rows = []
                    for i in range(batch):
                        pos = torch.arange(seq, device=device)
                        mask = torch.tensor([1.0 if t < lengths[i] else 0.0 for t in range(seq)], device=device)
                        scale = torch.tensor(1.0 / max(1, lengths[i]), device=device)
                        rows.append((embed(x[i]) + position(pos)) * mask[:, None] * scale)
                    out = torch.stack(rows)
                else:
                    pos = torch.arange(seq, device=device)
                    mask = (pos[None, :] < torch.tensor(lengths, device=device)[:, None]).float()
                    scale = 1.0 / torch.tensor(lengths, device=device, dtype=torch.float32).clamp(min=1)
                    out = (embed(x) + position(pos)[None]) * mask[..., None] * scale[:, None, None]
                return float(out.sum())
    elif pattern == "collate":
        if variant not in ("append", "preallocated"):
            tunebench.reject(f"variant: expected append or preallocated for collate, got {variant!r}")
        samples = [tokens[i, : lengths[i]].tolist() for i in range(batch)]

        def step():
            if variant == "append":
                ids, masks = [], []
                for s in samples:
                    row, mrow = [], []
                    for t in range(seq):
                        row.append(s[t] if t < len(s) else 0)
                        mrow.append(1 if t < len(s) else 0)
                    ids.append(row)
                    masks.append(mrow)
                out = torch.tensor(ids), torch.tensor(masks)
            else:
                ids = torch.zeros((batch, seq), dtype=torch.long)
                masks = torch.zeros((batch, seq), dtype=torch.long)
                for i, s in enumerate(samples):
                    ids[i, : len(s)] = torch.as_tensor(s)
                    masks[i, : len(s)] = 1
                out = ids, masks
            return int(out[0].sum())
    else:
        tunebench.reject(f"pattern: expected tensor-creation or collate, got {pattern!r}")

    for _ in timer.batches(range(cfg.warmup_steps + cfg.steps)):
        with timer.step(samples=batch):
            step()
    timer.finish({"pattern": pattern, "variant": variant})


if __name__ == "__main__":
    tunebench.main(run)
