"""The GPU proof kit's in-process finders, each run in a process of its own on proof_model.py's model:

  lightning   Lightning's BatchSizeFinder(mode="binsearch", steps_per_trial=3, init_val=2), as a
              Trainer callback on a LightningModule that trains the model
  accelerate  Accelerate's find_executable_batch_size(starting_batch_size=--start): halves after
              each OOM until a few training steps run

Prints one JSON line {"finder", "answer", "seconds", "error", "version"}; "skipped" with the reason
when the library cannot be imported (the rehearsal machine has neither).
"""

import argparse
import json
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import proof_model  # noqa: E402


def lightning(a, torch):
    try:
        import lightning.pytorch as pl  # noqa: PLC0415
        from lightning.pytorch.callbacks import BatchSizeFinder  # noqa: PLC0415
    except ImportError:
        try:
            import pytorch_lightning as pl  # noqa: PLC0415
            from pytorch_lightning.callbacks import BatchSizeFinder  # noqa: PLC0415
        except ImportError as error:
            return {"skipped": f"Lightning is not importable here ({error})"}

    device = proof_model.pick_device(torch, a.device)

    class Module(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.batch_size = 2
            self.net, _, _ = proof_model.build(torch, a.dim, a.seq, a.layers, "cpu")

        def train_dataloader(self):
            indices = torch.arange(10**7)
            return torch.utils.data.DataLoader(indices, batch_size=self.batch_size)

        def training_step(self, batch, i):
            n = batch.shape[0]
            x = torch.randn(n, a.seq, a.dim, device=self.device)
            y = torch.randint(0, 16, (n, a.seq), device=self.device)
            return torch.nn.functional.cross_entropy(self.net(x).reshape(-1, 16), y.reshape(-1))

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-4)

    # Lightning's defaults but the mode; newer versions also stop at max_val (8192), above this model's max.
    finder = BatchSizeFinder(mode="binsearch", steps_per_trial=3, init_val=2, max_trials=25)
    trainer = pl.Trainer(accelerator="gpu" if device.type == "cuda" else "cpu", devices=1, max_steps=1,
                         callbacks=[finder], logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(Module())
    return {"answer": getattr(finder, "optimal_batch_size", None), "version": pl.__version__}


def accelerate(a, torch):
    try:
        import accelerate as acc  # noqa: PLC0415
        from accelerate.utils import find_executable_batch_size  # noqa: PLC0415
    except ImportError as error:
        return {"skipped": f"Accelerate is not importable here ({error})"}
    device = proof_model.pick_device(torch, a.device)
    found = {}

    @find_executable_batch_size(starting_batch_size=a.start)
    def train(batch_size):
        _, _, step = proof_model.build(torch, a.dim, a.seq, a.layers, device)
        for i in range(3):
            step(batch_size, i).item()
        found["answer"] = batch_size

    train()
    return {"answer": found.get("answer"), "version": acc.__version__}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("finder", choices=["lightning", "accelerate"])
    p.add_argument("--start", type=int, default=8192)
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--device", default="auto")
    a = p.parse_args()
    t0 = time.monotonic()
    out = {"finder": a.finder}
    try:
        import torch  # noqa: PLC0415

        out.update((lightning if a.finder == "lightning" else accelerate)(a, torch))
    except BaseException as error:  # noqa: BLE001 - a crash of the finder is its result
        out["error"] = f"{type(error).__name__}: {error}"[:400]
    out["seconds"] = round(time.monotonic() - t0, 2)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
