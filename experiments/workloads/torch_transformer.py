"""Reference workload: a transformer-style language model trained on synthetic text with real
per-sample CPU work.

Each sample is a sentence generated from its index (seeded, so every trial sees the same data)
and tokenized on the CPU in Python: words are split, normalised, mapped to ids by a rolling
hash into the vocabulary, then padded or cut to `seq` tokens, as a tokenizer in a Dataset
does. The model is embeddings, `layers` encoder layers with a causal mask, and a tied output
head, trained on next-token prediction. Runs on CUDA unchanged.

Parameters: batch_size, num_workers, prefetch_factor, pin_memory, persistent_workers,
empty_cache, precision, seq (64), dim (32), heads (4), layers (2), ffn (128), vocab (512),
words (8 x seq: words generated and tokenized per sample, the CPU cost of the data),
epochs (2), threads (0 = torch's default), device (auto | cpu | cuda), alloc_conf.
"""

import random

import tunebench
import training

_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "ta", "shi", "vo", "ze", "pa", "qu", "ix", "orn", "el", "da")


def tokenize(text, vocab, seq):
    """Whitespace split, lowercase, strip punctuation, FNV-1a hash into the vocabulary (ids >= 2;
    0 pads, 1 starts), then cut or pad to seq tokens."""
    ids = [1]
    for word in text.split():
        word = word.lower().strip(".,;:!?")
        h = 2166136261
        for ch in word:
            h = ((h ^ ord(ch)) * 16777619) & 0xFFFFFFFF
        ids.append(2 + h % (vocab - 2))
    ids = ids[:seq]
    return ids + [0] * (seq - len(ids))


def build(cfg, torch):
    from torch import nn  # noqa: PLC0415
    from torch.nn import functional as F  # noqa: PLC0415
    from torch.utils.data import Dataset  # noqa: PLC0415

    seq, dim, vocab = cfg.get_int("seq", 64), cfg.get_int("dim", 32), cfg.get_int("vocab", 512)
    heads, ffn, depth = cfg.get_int("heads", 4), cfg.get_int("ffn", 128), cfg.get_int("layers", 2)
    n_words = cfg.get_int("words", 8 * seq)
    if dim % heads:
        tunebench.reject(f"dim ({dim}) must be a multiple of heads ({heads})")
    if vocab < 3:
        tunebench.reject(f"vocab: expected at least 3, got {vocab}")

    class SyntheticText(Dataset):
        def __init__(self, length):
            self.length = length

        def __len__(self):
            return self.length

        def __getitem__(self, index):
            rng = random.Random(index)
            words = ["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(n_words)]
            text = " ".join(w.capitalize() + "." if rng.random() < 0.1 else w for w in words)
            return (torch.tensor(tokenize(text, vocab, seq + 1), dtype=torch.long),)

    class LanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim)
            self.position = nn.Parameter(torch.zeros(seq, dim))
            layer = nn.TransformerEncoderLayer(dim, heads, ffn, dropout=0.0, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, depth)
            self.norm = nn.LayerNorm(dim)
            self.register_buffer("mask", torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1))

        def forward(self, tokens):
            x = self.embed(tokens) + self.position[: tokens.shape[1]]
            x = self.encoder(x, mask=self.mask[: tokens.shape[1], : tokens.shape[1]])
            return self.norm(x) @ self.embed.weight.t()

    def loss_of(model, batch):
        tokens = batch[0]
        logits = model(tokens[:, :-1])
        return F.cross_entropy(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1), ignore_index=0)

    return SyntheticText, LanguageModel(), loss_of


if __name__ == "__main__":
    # setup: the imports run once per trial, or once in all under warm_start: fork
    tunebench.main(lambda _: training.run(build), setup=training.preload)
