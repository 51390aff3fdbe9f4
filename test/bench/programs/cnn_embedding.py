"""Bench workload: a CNN + embedding classifier trained with AdamW, as people write one.

Images (3 x image_size x image_size) go through two convolutions; token ids (seq tokens out of
vocab) through an embedding averaged over the sequence; both meet in a linear head. Batches are
generated from a seeded generator in the main process. The model is built by `build(torch, cfg)`,
which the in-process finder (inprocess_finder.py) imports, so both train the very same model.

Parameters: batch_size, image_size (12), width (8), vocab (20000), dim (128), seq (128), classes (10),
epochs (2). Each epoch ends with an eval pass at twice the batch under torch.no_grad().
"""


def build(torch, get):
    """The model, its optimizer and a function that makes batch `i` of size `n`: what one training
    step needs. `get(name, default)` reads an integer parameter."""
    from torch import nn  # noqa: PLC0415

    size, width, vocab, dim, seq, classes = (
        get("image_size", 12), get("width", 8), get("vocab", 20000), get("dim", 128), get("seq", 128), get("classes", 10)
    )

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(
                nn.Conv2d(3, width, 3, padding=1), nn.ReLU(), nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(),
                nn.AdaptiveAvgPool2d(4), nn.Flatten(),
            )
            self.embed = nn.Embedding(vocab, dim)
            self.head = nn.Linear(2 * width * 16 + dim, classes)

        def forward(self, images, tokens):
            return self.head(torch.cat([self.conv(images), self.embed(tokens).mean(1)], 1))

    torch.manual_seed(1)
    model = Net()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def batch(i, n):
        g = torch.Generator().manual_seed(i)
        return (
            torch.randn(n, 3, size, size, generator=g),
            torch.randint(0, vocab, (n, seq), generator=g),
            torch.randint(0, classes, (n,), generator=g),
        )

    def step(images, tokens, labels):
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(images, tokens), labels)
        loss.backward()
        optimizer.step()
        return loss

    return model, step, batch


def train(_preloaded=None):
    import torch  # noqa: PLC0415

    import tunebench  # noqa: PLC0415

    cfg = tunebench.config()
    model, step, batch = build(torch, cfg.get_int)
    n = cfg.batch_size
    timer = tunebench.StepTimer()

    def evaluate(_epoch):
        with torch.no_grad():
            images, tokens, _ = batch(10**6, 2 * n)
            model(images, tokens)

    timer.on_epoch_end(evaluate)
    for i in timer.batches(range(cfg.get_int("epochs", 2) * 8)):
        images, tokens, labels = batch(i, n)
        with timer.step(samples=n):
            step(images, tokens, labels)
    timer.finish()


def preload():
    import torch  # noqa: PLC0415, F401


if __name__ == "__main__":
    import tunebench

    tunebench.main(train, setup=preload)
