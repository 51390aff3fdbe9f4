"""A text classifier written the way people write one, then adapted to tunebench.

It is the kind of script the README's PyTorch section is for: argparse flags, a custom Dataset
that does real CPU work per sample (generate a review, normalise and tokenize it), variable
lengths padded per batch by a collate_fn, a TransformerEncoder, AdamW with a warm-up then
cosine learning-rate schedule, gradient accumulation, and several epochs. Run it on its own:

    /usr/bin/python3 experiments/workloads/text_classifier.py --batch-size 64 --num-workers 2

The tunebench lines are marked "# tunebench". Memory grows after the first step (AdamW's two
state buffers appear at the first update; a longer batch pads to more tokens; each epoch starts
the loader's workers again), which is what a max-batch answer has to survive.
"""

import argparse
import math
import random

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

import tunebench  # tunebench

WORDS = ("good", "bad", "great", "awful", "fine", "poor", "loved", "hated", "plot", "actor", "scene",
         "music", "slow", "fast", "boring", "moving", "the", "a", "and", "but", "very", "not", "film")
POSITIVE = {"good", "great", "fine", "loved", "moving", "fast"}


def tokenize(text, vocab, max_len):
    """Lowercase, strip punctuation, hash each word into the vocabulary (0 pads, 1 starts)."""
    ids = [1]
    for word in text.lower().replace(",", " ").replace(".", " ").split():
        h = 2166136261
        for ch in word:
            h = ((h ^ ord(ch)) * 16777619) & 0xFFFFFFFF
        ids.append(2 + h % (vocab - 2))
    return ids[:max_len]


class Reviews(Dataset):
    """Synthetic reviews from the index (same data in every run); lengths vary from 8 to max_len."""

    def __init__(self, size, vocab, max_len):
        self.size, self.vocab, self.max_len = size, vocab, max_len

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        rng = random.Random(index)
        n = rng.randint(8, self.max_len - 1)
        words = [rng.choice(WORDS) for _ in range(n)]
        text = " ".join(w.capitalize() + "." if rng.random() < 0.1 else w for w in words)
        label = int(sum(w in POSITIVE for w in words) * 2 > n * len(POSITIVE) / len(WORDS) * 2)
        return torch.tensor(tokenize(text, self.vocab, self.max_len), dtype=torch.long), label


def pad_collate(samples):
    """Pads to the longest sample in the batch; returns (ids, mask, labels)."""
    longest = max(len(ids) for ids, _ in samples)
    ids = torch.zeros(len(samples), longest, dtype=torch.long)
    mask = torch.ones(len(samples), longest, dtype=torch.bool)  # True = padding
    for i, (s, _) in enumerate(samples):
        ids[i, : len(s)] = s
        mask[i, : len(s)] = False
    return ids, mask, torch.tensor([y for _, y in samples])


class Classifier(nn.Module):
    def __init__(self, vocab, dim, heads, layers, max_len):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.position = nn.Parameter(torch.randn(max_len, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 4, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(dim, 2)

    def forward(self, ids, mask):
        x = self.embed(ids) + self.position[: ids.shape[1]]
        x = self.encoder(x, src_key_padding_mask=mask)
        keep = (~mask).unsqueeze(-1).float()
        return self.head((x * keep).sum(1) / keep.sum(1).clamp(min=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--num-workers", type=int, default=0)
    parser.add_argument("--prefetch-factor", type=int, default=None)
    parser.add_argument("--pin-memory", action="store_true")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=None, help="stop after this many steps in all")
    parser.add_argument("--samples", type=int, default=4096, help="reviews per epoch")
    parser.add_argument("--max-len", type=int, default=96)
    parser.add_argument("--vocab", type=int, default=4096)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--warmup", type=int, default=20, help="learning-rate warm-up steps")
    parser.add_argument("--accumulate", type=int, default=2, help="gradient accumulation steps")
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    dataset = Reviews(args.samples, args.vocab, args.max_len)
    extra = {"prefetch_factor": args.prefetch_factor} if args.num_workers and args.prefetch_factor else {}
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, collate_fn=pad_collate,
                        num_workers=args.num_workers, pin_memory=args.pin_memory, drop_last=True, **extra)
    model = Classifier(args.vocab, args.dim, args.heads, args.layers, args.max_len)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    total = min(args.steps or 10**9, args.epochs * len(loader))
    updates = max(1, total // args.accumulate)

    def schedule(update):
        if update < args.warmup:
            return (update + 1) / args.warmup
        return 0.5 * (1 + math.cos(math.pi * min(1.0, (update - args.warmup) / max(1, updates - args.warmup))))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    loss_fn = nn.CrossEntropyLoss()
    timer = tunebench.StepTimer(model=model)  # tunebench: the device comes from the model
    step = 0
    for epoch in range(args.epochs):
        for ids, mask, labels in timer.batches(loader):  # tunebench: stops when a trial has its steps
            with timer.step():  # tunebench: samples counted from the batch (ids.shape[0])
                loss = loss_fn(model(ids, mask), labels) / args.accumulate
                loss.backward()
                if (step + 1) % args.accumulate == 0:
                    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    optimizer.step()
                    scheduler.step()
                    optimizer.zero_grad(set_to_none=True)
            step += 1
            if args.steps is not None and step >= args.steps:
                break
        if step:
            print(f"epoch {epoch}: loss {loss.item() * args.accumulate:.3f}", flush=True)
        if timer.done or (args.steps is not None and step >= args.steps):  # tunebench
            break
    timer.finish()  # tunebench
    print(f"trained {step} steps", flush=True)


if __name__ == "__main__":
    tunebench.main(main)  # tunebench
