"""The training loop shared by the reference workloads (torch_cnn.py, torch_transformer.py).

It is what a tuned PyTorch job looks like: the DataLoader takes its settings from the trial's
config, the step timer separates data-wait from compute, the empty_cache policy and precision
come from the config, and an OOM becomes the protocol's `oom` event. On CUDA only the device
differs; nothing here is CPU-specific.
"""

import inspect
import os
import tempfile

import tunebench


def preload():
    """The imports every trial needs, for tunebench.main(..., setup=training.preload): under warm start
    they run once in the server, before any trial is forked. The allocator settings of a fresh trial
    are applied first (a warm server has no trial config, and CUDA starts later, in the trial)."""
    tunebench.apply_allocator_env(tunebench.config())
    import torch  # noqa: PLC0415, F401
    import torch.nn.functional  # noqa: PLC0415, F401
    import torch.utils.data  # noqa: PLC0415, F401


def setup(cfg):
    """Applies the allocator settings before torch touches CUDA, then returns (torch, device)."""
    allocator = tunebench.apply_allocator_env(cfg)
    import torch  # noqa: PLC0415 - imported after the allocator environment is set

    wanted = cfg.get_str("device", "auto")
    if wanted == "auto":
        wanted = "cuda" if torch.cuda.is_available() else "cpu"
    if wanted == "cuda" and not torch.cuda.is_available():
        tunebench.reject("device: cuda was requested but torch.cuda.is_available() is False")
    threads = cfg.get_int("threads", 0)
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(cfg.get_int("seed", 1))
    return torch, torch.device(wanted), allocator


def run(build, eval_batches=0, checkpoint=False):
    """Runs a reference workload: build(cfg, torch) returns (dataset_class, model, loss_of).
    eval_batches and checkpoint are the defaults of the parameters of the same names: the batches of
    the eval loop at each epoch's end (0: none) and whether each epoch ends with a checkpoint save."""
    cfg = tunebench.config()
    torch, device, allocator = setup(cfg)
    dataset_class, model, loss_of = build(cfg, torch)
    epochs = epoch_count(cfg)
    batches = cfg.get_int("eval_batches", eval_batches)
    eval_set = eval_dataset(dataset_class, batches * eval_batch_size(cfg)) if batches > 0 else None
    phases = {"eval_set": eval_set, "checkpoint": cfg.get_bool("checkpoint", checkpoint)}
    dataset = dataset_class(epoch_length(cfg, epochs) * cfg.batch_size)
    train(cfg, torch, device, dataset, model, loss_of, allocator, epochs, phases=phases)


def eval_dataset(dataset_class, length):
    """The eval split: dataset_class(length, train=False) where the class takes `train` (no augmentation)."""
    if "train" in inspect.signature(dataset_class).parameters:
        return dataset_class(length, train=False)
    return dataset_class(length)


def eval_batch_size(cfg):
    """The eval loop's batch (eval_batch_size; default twice batch_size, as scripts often do: eval
    keeps no activations for backward). A max-batch stage with `param: eval_batch_size` searches it."""
    size = cfg.get_int("eval_batch_size", 2 * cfg.batch_size)
    if size < 1:
        tunebench.reject(f"eval_batch_size: expected at least 1, got {size}")
    return size


def epoch_count(cfg):
    """The short epochs a trial spans (TUNEBENCH_TRIAL_EPOCHS, else the `epochs` parameter), so that
    workers that are not persistent are started again at each epoch, as in a real job."""
    return max(1, min(cfg.epochs or cfg.get_int("epochs", 2), cfg.warmup_steps + cfg.steps))


def epoch_length(cfg, epochs):
    """Batches per epoch: the trial's warm-up plus steps spread over `epochs`."""
    return -(-(cfg.warmup_steps + cfg.steps) // epochs)


def train(cfg, torch, device, dataset, model, loss_of, allocator, epochs, sampler=None, wrap=None, phases=None):
    """Runs warm-up plus timed steps over `dataset` in `epochs` epochs; loss_of(model, batch)
    returns the loss. Data parallel: `sampler` gives each rank its share of the dataset and
    wrap(model) returns the model to train (DistributedDataParallel), after it is on the device.
    phases: {"eval_set": a dataset or None, "checkpoint": bool}: the work at each epoch's end."""
    from torch.utils.data import DataLoader  # noqa: PLC0415

    loader_kwargs = cfg.dataloader_kwargs()
    loader = DataLoader(dataset, batch_size=cfg.batch_size, shuffle=False, drop_last=True, sampler=sampler, **loader_kwargs)
    model.to(device)
    if wrap is not None:
        model = wrap(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.get_float("lr", 0.01), momentum=0.9)
    policy = tunebench.EmptyCachePolicy(cfg.get_str("empty_cache", "never"), torch=torch)
    autocast, scaler = tunebench.precision_context(cfg.get_str("precision", "fp32"), device.type, torch=torch)
    timer = tunebench.StepTimer(model=model, torch=torch, epochs=epochs)
    non_blocking = bool(loader_kwargs["pin_memory"]) and device.type == "cuda"
    scratch = register_phases(timer, cfg, torch, device, model, optimizer, loss_of, autocast, phases or {})

    def step(batch):
        batch = [t.to(device, non_blocking=non_blocking) for t in batch]
        optimizer.zero_grad(set_to_none=True)
        with autocast:
            loss = loss_of(model, batch)
        return backward_step(loss, optimizer, scaler)

    # In a trial the first batches() call takes warm-up + steps batches across all the epochs;
    # run on its own, the script trains `epochs` epochs, one per call.
    for _ in range(epochs):
        for batch in timer.batches(loader):
            with timer.step():
                policy.run(step, batch)
            policy.after_step(timer.index - 1)
        if timer.done:
            break
    if scratch is not None:
        scratch.cleanup()
    timer.finish({
        "empty_cache_calls": policy.calls,
        "empty_cache_seconds": policy.seconds,
        "allocator_env": allocator,
        "torch": torch.__version__,
        "pid": os.getpid(),
    })


def backward_step(loss, optimizer, scaler):
    """Backward and the optimizer's step, through the grad scaler of fp16 when there is one; the loss as a float."""
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        optimizer.step()
    return float(loss.detach())


def register_phases(timer, cfg, torch, device, model, optimizer, loss_of, autocast, phases):
    """Registers the eval loop and the checkpoint save with the timer, which runs them at each epoch's
    end (inside a trial too); returns the folder the checkpoints go to, or None."""
    from torch.utils.data import DataLoader  # noqa: PLC0415

    eval_set = phases.get("eval_set")
    if eval_set is not None:
        eval_loader = DataLoader(eval_set, batch_size=eval_batch_size(cfg), shuffle=False)

        def evaluate(epoch):
            model.eval()
            with torch.no_grad(), autocast:
                losses = [float(loss_of(model, [t.to(device) for t in batch])) for batch in eval_loader]
            model.train()
            return sum(losses) / max(1, len(losses))

        timer.on_epoch_end(evaluate, phase="eval")
    if not phases.get("checkpoint"):
        return None
    scratch = tempfile.TemporaryDirectory(prefix="tunebench-checkpoint-")

    def save(epoch):
        state = {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
        torch.save(state, os.path.join(scratch.name, "last.pt"))

    timer.on_epoch_end(save, phase="checkpoint")
    return scratch
