"""tunebench's Python adapter: the trial's config, a step timer that reports JSON-lines events,
DataLoader settings, empty_cache policies, precision and OOM handling.

Standard library only; torch is optional and imported lazily, so the same module works in any
interpreter. A training script adds a few lines (see the README):

    import tunebench
    cfg = tunebench.config()
    loader = DataLoader(dataset, batch_size=cfg.batch_size, **cfg.dataloader_kwargs())
    timer = tunebench.StepTimer()
    for batch in timer.batches(loader):
        with timer.step(samples=len(batch)):
            train_step(batch)
    timer.finish()
"""

import contextlib
import json
import os
import re
import resource
import sys
import time

OOM_EXIT_CODE = 86  # the protocol's exit status after an `oom` event
INVALID_EXIT_CODE = 87  # the protocol's exit status after an `error` event about the config

_OOM_PATTERNS = (
    re.compile(r"CUDA out of memory", re.I),
    re.compile(r"OutOfMemoryError"),
    re.compile(r"DefaultCPUAllocator: can't allocate memory", re.I),
    re.compile(r"std::bad_alloc"),
)

_torch_override = None


def set_torch(module):
    """Use `module` instead of importing torch (tests pass a stand-in; None restores the import)."""
    global _torch_override
    _torch_override = module


def torch_module():
    """The torch module, or None when it is not installed."""
    if _torch_override is not None:
        return _torch_override
    try:
        import torch  # noqa: PLC0415 - optional dependency, imported on first use
    except ImportError:
        return None
    return torch


class Events:
    """Appends protocol events to TUNEBENCH_EVENTS, flushing each line before returning."""

    def __init__(self, path=None):
        self.path = path if path is not None else os.environ.get("TUNEBENCH_EVENTS")

    def emit(self, event):
        # Under torchrun every rank runs this script; only rank 0 reports, once.
        if not self.path or os.environ.get("RANK", "0") != "0":
            return
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(event) + "\n")
            f.flush()


class Config:
    """The trial's configuration from TUNEBENCH_CONFIG, with typed getters."""

    def __init__(self, raw=None):
        if raw is None:
            raw = json.loads(os.environ.get("TUNEBENCH_CONFIG", "{}"))
        if not isinstance(raw, dict):
            raise ValueError("TUNEBENCH_CONFIG must be a JSON object")
        self.raw = dict(raw)

    def get(self, name, default=None):
        return self.raw.get(name, default)

    def get_int(self, name, default=None):
        value = self.raw.get(name, default)
        if value is None:
            return None
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError(f"{name}: expected an integer, got {value!r}")
        return int(value)

    def get_float(self, name, default=None):
        value = self.raw.get(name, default)
        return None if value is None else float(value)

    def get_bool(self, name, default=False):
        value = self.raw.get(name, default)
        if isinstance(value, str):
            if value.lower() in ("true", "1", "yes", "on"):
                return True
            if value.lower() in ("false", "0", "no", "off", ""):
                return False
            raise ValueError(f"{name}: expected true or false, got {value!r}")
        return bool(value)

    def get_str(self, name, default=None):
        value = self.raw.get(name, default)
        return None if value is None else str(value)

    @property
    def batch_size(self):
        return self.get_int("batch_size", 1)

    @property
    def warmup_steps(self):
        return int(os.environ.get("TUNEBENCH_WARMUP_STEPS", "0"))

    @property
    def steps(self):
        return int(os.environ.get("TUNEBENCH_STEPS", "10"))

    def dataloader_kwargs(self):
        """num_workers, pin_memory and, only with workers, prefetch_factor and persistent_workers,
        as torch.utils.data.DataLoader requires (it rejects those two when num_workers is 0)."""
        workers = self.get_int("num_workers", 0)
        kwargs = {"num_workers": workers, "pin_memory": self.get_bool("pin_memory", False)}
        if workers > 0:
            if "prefetch_factor" in self.raw:
                kwargs["prefetch_factor"] = self.get_int("prefetch_factor")
            kwargs["persistent_workers"] = self.get_bool("persistent_workers", False)
        return kwargs


def config():
    return Config()


class EmptyCachePolicy:
    """never | every-step | every-<N> | on-oom: when to call torch.cuda.empty_cache()."""

    def __init__(self, policy="never", torch=None):
        policy = policy or "never"
        match = re.fullmatch(r"every-(\d+)", policy)
        if policy not in ("never", "every-step", "on-oom") and not (match and int(match.group(1)) > 0):
            raise ValueError(f"empty_cache: expected never, every-step, every-<N> or on-oom, got {policy!r}")
        self.policy = policy
        self.every = 1 if policy == "every-step" else int(match.group(1)) if match else 0
        self.torch = torch if torch is not None else torch_module()
        self.calls = 0
        self.seconds = 0.0

    def _cuda(self):
        t = self.torch
        return t is not None and t.cuda.is_available()

    def empty_cache(self):
        """Synchronizes, frees the cache and counts the call and its time (CUDA only)."""
        if not self._cuda():
            return
        start = time.perf_counter()
        self.torch.cuda.synchronize()
        self.torch.cuda.empty_cache()
        self.seconds += time.perf_counter() - start
        self.calls += 1

    def after_step(self, step_index):
        if self.every and (step_index + 1) % self.every == 0:
            self.empty_cache()

    def run(self, fn, *args, **kwargs):
        """Runs one step; with on-oom, an OOM frees the cache and the step is retried once."""
        try:
            return fn(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - re-raised unless it is an OOM we handle
            if self.policy != "on-oom" or not is_oom(error):
                raise
            self.empty_cache()
            return fn(*args, **kwargs)


def is_oom(error):
    """OOM by exception type first (torch.cuda.OutOfMemoryError, MemoryError), then by message."""
    t = torch_module()
    oom_type = getattr(getattr(t, "cuda", None), "OutOfMemoryError", None) if t is not None else None
    if isinstance(oom_type, type) and isinstance(error, oom_type):
        return True
    if isinstance(error, MemoryError) or type(error).__name__ == "OutOfMemoryError":
        return True
    text = str(error)
    return any(p.search(text) for p in _OOM_PATTERNS)


def apply_allocator_env(cfg):
    """Sets PYTORCH_CUDA_ALLOC_CONF and PYTORCH_ALLOC_CONF from the `alloc_conf` parameter. Call it
    before anything initialises CUDA: the allocator reads them once. Returns what took effect."""
    conf = cfg.get_str("alloc_conf")
    if conf:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = conf
        os.environ["PYTORCH_ALLOC_CONF"] = conf
    return {k: os.environ[k] for k in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF") if k in os.environ}


def precision_context(precision, device_type="cpu", torch=None):
    """fp32: no autocast; bf16 / fp16: torch.autocast. Returns (context, grad_scaler or None);
    fp16 gets a GradScaler on CUDA, where it prevents gradient underflow."""
    precision = precision or "fp32"
    if precision not in ("fp32", "bf16", "fp16"):
        raise ValueError(f"precision: expected fp32, bf16 or fp16, got {precision!r}")
    if precision == "fp32":
        return contextlib.nullcontext(), None
    t = torch if torch is not None else torch_module()
    if t is None:
        raise RuntimeError(f"precision {precision} needs torch")
    dtype = t.bfloat16 if precision == "bf16" else t.float16
    scaler = t.cuda.amp.GradScaler() if precision == "fp16" and device_type == "cuda" else None
    return t.autocast(device_type=device_type, dtype=dtype), scaler


class StepTimer:
    """Times steps, separating the wait for data from compute. On CUDA it synchronizes before every
    clock read, so that queued kernels are counted in the step that launched them."""

    def __init__(self, events=None, device_type="cpu", torch=None, clock=time.perf_counter, warmup_steps=None):
        self.events = events or Events()
        self.device_type = device_type
        self.torch = torch if torch is not None else (torch_module() if device_type == "cuda" else None)
        self.clock = clock
        self.warmup_steps = int(os.environ.get("TUNEBENCH_WARMUP_STEPS", "0")) if warmup_steps is None else warmup_steps
        self.index = 0
        self._wait = 0.0
        self._step_start = None

    def _now(self):
        if self.device_type == "cuda" and self.torch is not None:
            self.torch.cuda.synchronize()
        return self.clock()

    def batches(self, iterable):
        """Yields from `iterable`, timing how long each batch took to arrive."""
        iterator = iter(iterable)
        while True:
            start = self._now()
            try:
                batch = next(iterator)
            except StopIteration:
                return
            end = self._now()
            self._wait = end - start
            self._step_start = start
            yield batch

    @contextlib.contextmanager
    def step(self, samples):
        start = self._step_start if self._step_start is not None else self._now()
        yield
        end = self._now()
        self.events.emit({
            "event": "step",
            "samples": samples,
            "seconds": end - start,
            "data_wait_seconds": self._wait,
            "warmup": self.index < self.warmup_steps,
        })
        self.index += 1
        self._wait = 0.0
        self._step_start = None

    def finish(self, extra=None):
        """Reports peak memory, then `done`."""
        self.events.emit(dict({"event": "memory", **peak_memory(self.device_type, self.torch)}, **(extra or {})))
        self.events.emit({"event": "done"})


def _peak_address_space():
    """VmPeak from /proc/self/status: the quantity that prlimit --as caps (Linux only)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmPeak:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def peak_memory(device_type="cpu", torch=None):
    """CUDA: max_memory_allocated/reserved and num_alloc_retries; always: the process's peak RSS
    and, on Linux, its peak address space."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux
    out = {"peak_bytes": rss, "peak_rss_bytes": rss, "device": "cpu"}
    vm = _peak_address_space()
    if vm is not None:
        out["peak_address_space_bytes"] = vm
    t = torch
    if device_type == "cuda" and t is not None and t.cuda.is_available():
        out["device"] = "cuda"
        out["peak_bytes"] = int(t.cuda.max_memory_allocated())
        out["max_memory_reserved"] = int(t.cuda.max_memory_reserved())
        out["num_alloc_retries"] = int(t.cuda.memory_stats().get("num_alloc_retries", 0))
    return out


def main(fn, events=None):
    """Runs fn(); an OOM becomes an `oom` event and exit 86, a bad config an `error` event and exit 87."""
    events = events or Events()
    try:
        fn()
    except ValueError as error:
        events.emit({"event": "error", "message": str(error)})
        print(f"tunebench: invalid configuration: {error}", file=sys.stderr)
        sys.exit(INVALID_EXIT_CODE)
    except BaseException as error:  # noqa: BLE001 - classify, then re-raise anything else
        if isinstance(error, Exception) and is_oom(error):
            events.emit({"event": "oom", "message": str(error)[:2000]})
            print(f"tunebench: out of memory: {error}", file=sys.stderr)
            sys.exit(OOM_EXIT_CODE)
        raise
