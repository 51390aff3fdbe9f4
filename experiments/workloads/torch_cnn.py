"""Reference workload: a small CNN trained on synthetic images with real per-sample CPU work.

Each sample is generated from its index (seeded, so every trial sees the same data), then
augmented on the CPU the way an image pipeline does: random crop with padding, flip, colour
jitter and `augment` blur passes. The DataLoader settings, precision and empty_cache policy
come from the trial's config (see training.py). Runs on CUDA unchanged.

Parameters: batch_size, num_workers, prefetch_factor, pin_memory, persistent_workers,
empty_cache, precision, image_size (32), width (16), blocks (3), classes (10), augment (6),
epochs (2), threads (0 = torch's default), device (auto | cpu | cuda), alloc_conf, and the work at
each epoch's end: eval_batches (1: an eval loop under torch.no_grad(), on images without augmentation), eval_batch_size (twice
batch_size) and checkpoint (true: torch.save of model and optimizer), run through the adapter's
timer.on_epoch_end, so that a trial runs them at each epoch boundary as training does.
"""

import tunebench
import training


def build(cfg, torch):
    from torch import nn  # noqa: PLC0415
    from torch.nn import functional as F  # noqa: PLC0415
    from torch.utils.data import Dataset  # noqa: PLC0415

    size = cfg.get_int("image_size", 32)
    classes = cfg.get_int("classes", 10)
    passes = cfg.get_int("augment", 6)
    if size < 8:
        tunebench.reject(f"image_size: expected at least 8, got {size}")
    blur = torch.tensor([1.0, 2.0, 1.0]).outer(torch.tensor([1.0, 2.0, 1.0]))
    blur = (blur / blur.sum()).expand(3, 1, 3, 3).contiguous()

    class SyntheticImages(Dataset):
        def __init__(self, length, train=True):
            self.length = length
            self.train = train  # the eval split is not augmented, as in an image pipeline

        def __len__(self):
            return self.length

        def __getitem__(self, index):
            g = torch.Generator().manual_seed(index)
            image = torch.rand(3, size, size, generator=g)
            if not self.train:
                return (image - 0.5) / 0.25, index % classes
            padded = F.pad(image.unsqueeze(0), (4, 4, 4, 4), mode="reflect")
            dx, dy = torch.randint(0, 9, (2,), generator=g).tolist()
            image = padded[:, :, dy:dy + size, dx:dx + size]
            if torch.rand(1, generator=g).item() < 0.5:
                image = image.flip(3)
            image = image * (0.8 + 0.4 * torch.rand(3, 1, 1, generator=g))
            for _ in range(passes):
                image = F.conv2d(F.pad(image, (1, 1, 1, 1), mode="replicate"), blur, groups=3)
            image = (image.squeeze(0) - 0.5) / 0.25
            return image, index % classes

    layers = []
    channels, width = 3, cfg.get_int("width", 16)
    for _ in range(cfg.get_int("blocks", 3)):
        layers += [nn.Conv2d(channels, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(inplace=True), nn.MaxPool2d(2)]
        channels, width = width, width * 2
    model = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, classes))
    return SyntheticImages, model, lambda m, batch: F.cross_entropy(m(batch[0]), batch[1])


if __name__ == "__main__":
    # setup: the imports run once per trial, or once in all under warm_start: fork
    tunebench.main(lambda _: training.run(build, eval_batches=1, checkpoint=True), setup=training.preload)
