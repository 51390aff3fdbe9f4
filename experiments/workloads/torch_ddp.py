"""Reference workload: data-parallel training with DistributedDataParallel, one process per rank.

Run it with `workload.launcher: { kind: torchrun, nproc_per_node: N }` (docs/ddp.md): torchrun
starts N ranks and sets RANK, WORLD_SIZE, LOCAL_RANK and the rendezvous address; each rank joins
the process group (gloo on CPU, nccl on CUDA), trains a classifier on its share of a synthetic
dataset with `batch_size` samples per step, and reports its steps and memory through the adapter.
The harness sums the samples of the ranks and takes the largest rank's memory. Run alone (no
torchrun) it is one rank of one.

The samples are large single-channel images (scans), each generated from its index (seeded, so
every trial sees the same data) on the CPU; the model pools them down before an MLP. So memory
grows quickly with the batch while a step stays cheap: the max batch is found in a few seconds a
probe, on a CPU.

Parameters: batch_size (per rank), num_workers, prefetch_factor, pin_memory, persistent_workers,
empty_cache, precision, image_size (256), pool (8), hidden (128), classes (10), epochs (2),
threads (0 = torch's default; torchrun sets OMP_NUM_THREADS=1 unless the environment has it),
device (auto | cpu | cuda), backend (auto: nccl on CUDA, else gloo), alloc_conf.
"""

import os

import tunebench
import training


def build(cfg, torch):
    from torch import nn  # noqa: PLC0415
    from torch.nn import functional as F  # noqa: PLC0415
    from torch.utils.data import Dataset  # noqa: PLC0415

    size = cfg.get_int("image_size", 256)
    pool = cfg.get_int("pool", 8)
    hidden = cfg.get_int("hidden", 128)
    classes = cfg.get_int("classes", 10)
    if size < pool or size % pool:
        tunebench.reject(f"image_size: expected a multiple of pool ({pool}), got {size}")
    if min(hidden, classes) < 1:
        tunebench.reject(f"hidden and classes must be positive, got {hidden} and {classes}")
    coarse = size // pool

    class SyntheticScans(Dataset):
        """Single-channel images: a coarse random pattern from the index, upsampled and shaded."""

        def __init__(self, length):
            self.length = length

        def __len__(self):
            return self.length

        def __getitem__(self, index):
            g = torch.Generator().manual_seed(index)
            pattern = torch.rand(coarse, coarse, generator=g)
            image = pattern.repeat_interleave(pool, 0).repeat_interleave(pool, 1)
            image.mul_(0.5 + torch.rand(1, generator=g))
            return image.unsqueeze(0), index % classes

    class Classifier(nn.Module):
        """Downsamples first (average pooling), then an MLP: memory grows with the batch, compute little."""

        def __init__(self):
            super().__init__()
            self.mlp = nn.Sequential(nn.Flatten(), nn.Linear(coarse * coarse, hidden), nn.ReLU(), nn.Linear(hidden, classes))

        def forward(self, x):
            return self.mlp(F.avg_pool2d(x, pool))

    return SyntheticScans, Classifier(), lambda m, batch: F.cross_entropy(m(batch[0]), batch[1])


def join_process_group(cfg, torch, device):
    """Joins the group torchrun set up (env://); returns (rank, world_size)."""
    import torch.distributed as dist  # noqa: PLC0415

    backend = cfg.get_str("backend", "auto")
    if backend == "auto":
        backend = "nccl" if device.type == "cuda" else "gloo"
    if backend not in ("gloo", "nccl"):
        tunebench.reject(f"backend: expected auto, gloo or nccl, got {backend!r}")
    if backend == "nccl" and device.type != "cuda":
        tunebench.reject("backend: nccl needs device cuda; use gloo on CPU")
    if "WORLD_SIZE" not in os.environ:  # run alone: a group of one
        os.environ.update({"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29511"})
    dist.init_process_group(backend)
    return dist.get_rank(), dist.get_world_size()


def run():
    cfg = tunebench.config()
    torch, device, allocator = training.setup(cfg)
    if device.type == "cuda":
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    rank, world = join_process_group(cfg, torch, device)
    from torch.nn.parallel import DistributedDataParallel  # noqa: PLC0415
    from torch.utils.data.distributed import DistributedSampler  # noqa: PLC0415

    dataset_class, model, loss_of = build(cfg, torch)
    epochs = training.epoch_count(cfg)
    # Every rank gets epoch_length batches of batch_size per epoch.
    dataset = dataset_class(training.epoch_length(cfg, epochs) * cfg.batch_size * world)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=False, drop_last=True)

    def wrap(m):
        return DistributedDataParallel(m, device_ids=[device.index] if device.type == "cuda" else None)

    training.train(cfg, torch, device, dataset, model, loss_of, allocator, epochs, sampler=sampler, wrap=wrap)


if __name__ == "__main__":
    tunebench.main(run)
