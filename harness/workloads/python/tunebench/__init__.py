"""tunebench's Python adapter: the trial's config, a step timer that reports JSON-lines events,
DataLoader settings, empty_cache policies, precision and OOM handling.

Standard library only; torch is optional and imported lazily, so the same module works in any
interpreter. A training script adds a few lines (see the README's PyTorch adapter section and docs/protocol.md):

    import tunebench
    cfg = tunebench.config()
    loader = DataLoader(dataset, batch_size=cfg.batch_size, **cfg.dataloader_kwargs())
    timer = tunebench.StepTimer(model=model)
    timer.on_epoch_end(evaluate, phase="eval")          # evaluate(epoch) at every epoch's end
    timer.on_epoch_end(save_checkpoint, phase="checkpoint")
    for batch in timer.batches(loader):   # in a trial: warm-up + timed steps, across epochs
        with timer.step():                # samples: tunebench.count_samples(batch)
            train_step(batch)
    timer.finish()
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import re
import resource
import sys
import time
import traceback
from collections.abc import Mapping
from typing import (
    Any,
    Callable,
    ContextManager,
    Dict,
    Generator,
    Iterable,
    Iterator,
    NoReturn,
    SupportsInt,
    TypeVar,
    cast,
    overload,
)

__all__ = [
    "INVALID_EXIT_CODE",
    "OOM_EXIT_CODE",
    "Config",
    "EmptyCachePolicy",
    "Events",
    "InvalidConfig",
    "StepTimer",
    "apply_allocator_env",
    "bind_argparse",
    "config",
    "count_samples",
    "is_oom",
    "main",
    "peak_memory",
    "precision_context",
    "reject",
]

OOM_EXIT_CODE = 86  # the protocol's exit status after an `oom` event
INVALID_EXIT_CODE = 87  # the protocol's exit status after an `error` event about the config

# The environment variables the adapter reads and sets, in one place (docs/protocol.md lists the harness's).
CONFIG_ENV = "TUNEBENCH_CONFIG"  # the trial's configuration, a JSON object
EVENTS_ENV = "TUNEBENCH_EVENTS"  # the file that protocol events are appended to
WARMUP_STEPS_ENV = "TUNEBENCH_WARMUP_STEPS"  # the trial's warm-up steps
STEPS_ENV = "TUNEBENCH_STEPS"  # the trial's timed steps; set: batches() runs a trial
TRIAL_EPOCHS_ENV = "TUNEBENCH_TRIAL_EPOCHS"  # how many epochs the trial's steps span
WARM_SERVER_ENV = "TUNEBENCH_WARM_SERVER"  # set by the harness on the warm server it starts
RANKS_ENV = "TUNEBENCH_RANKS"  # set by the harness when it runs the trial as N ranks (workload.launcher)
RANK_ENV = "RANK"  # torchrun's rank of this process
BRACKET_ENV = "TUNEBENCH_BRACKET"  # a bracket session: the control file its in-process attempts are read from
ALLOC_CONF_ENVS = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")  # the allocator's settings, old name and new

# torch is optional and never imported for the type checker either (its result must not depend on
# whether torch is installed): a torch module, tensor or device is Any.
Torch = Any
Where = Dict[str, Any]  # {"phase", "epoch", "step"}: where a failure happened
_T = TypeVar("_T")
_S = TypeVar("_S")
_EpochWork = TypeVar("_EpochWork", bound=Callable[[int], object])

_OOM_PATTERNS = (
    re.compile(r"CUDA out of memory", re.I),
    re.compile(r"OutOfMemoryError"),
    re.compile(r"DefaultCPUAllocator: can't allocate memory", re.I),
    re.compile(r"std::bad_alloc"),
)

_torch_override: Torch = None
_active_timer: StepTimer | None = None  # the last StepTimer made: main() asks it where a failure happened

PHASE_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")  # eval, checkpoint, ...: the harness keeps these names


class InvalidConfig(ValueError):
    """The trial's configuration cannot run: main() reports it as the `invalid` outcome (exit 87).
    Any other exception, ValueError included, is a crash."""


def reject(message: str) -> NoReturn:
    """Rejects the trial's configuration, for example `tunebench.reject("dim must be a multiple of heads")`."""
    raise InvalidConfig(message)


def set_torch(module: Torch) -> None:
    """Use `module` instead of importing torch (tests pass a stand-in; None restores the import)."""
    global _torch_override
    _torch_override = module


def torch_module() -> Torch:
    """The torch module, or None when it is not installed."""
    if _torch_override is not None:
        return _torch_override
    try:
        # Optional, imported on first use; by name, so that the type checker does not read torch.
        return importlib.import_module("torch")
    except ImportError:
        return None


class Events:
    """Appends protocol events to TUNEBENCH_EVENTS, one write() per line.

    Under torchrun every rank runs the script. When the harness launched the ranks itself
    (TUNEBENCH_RANKS is set), every rank reports and each event carries its "rank"; the lines of
    all ranks go to one file opened for appending, each in a single write, so they never mix.
    Without TUNEBENCH_RANKS (torchrun started by the script's own command) only rank 0 reports."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = path if path is not None else os.environ.get(EVENTS_ENV)

    def emit(self, event: Mapping[str, Any]) -> None:
        if not self.path:
            return
        rank = os.environ.get(RANK_ENV, "0")
        if os.environ.get(RANKS_ENV):
            event = dict(event, rank=int(rank) if rank.isdigit() else rank)
        elif rank != "0":
            return
        line = (json.dumps(event) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


def _env_int(name: str, minimum: int) -> int | None:
    """A protocol variable as an integer >= minimum, or None when it is not set."""
    text = os.environ.get(name)
    if text is None or text == "":
        return None
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < minimum:
        raise InvalidConfig(f"{name}: expected an integer >= {minimum}, got {text!r}")
    return value


class Config:
    """The trial's configuration from TUNEBENCH_CONFIG, with typed getters that raise InvalidConfig."""

    def __init__(self, raw: dict[str, Any] | None = None) -> None:
        if raw is None:
            try:
                raw = json.loads(os.environ.get(CONFIG_ENV, "{}"))
            except ValueError as error:
                raise InvalidConfig(f"{CONFIG_ENV} must be a JSON object: {error}") from error
        if not isinstance(raw, dict):
            raise InvalidConfig(f"{CONFIG_ENV} must be a JSON object, got {type(raw).__name__}")
        self.raw: dict[str, Any] = dict(raw)

    def get(self, name: str, default: Any = None) -> Any:
        return self.raw.get(name, default)

    def get_int(self, name: str, default: int | None = None) -> int | None:
        value = self.raw.get(name, default)
        if value is None:
            return None
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise InvalidConfig(f"{name}: expected an integer, got {value!r}")
        try:
            return int(value)
        except (TypeError, ValueError):
            raise InvalidConfig(f"{name}: expected an integer, got {value!r}") from None

    def get_float(self, name: str, default: float | None = None) -> float | None:
        value = self.raw.get(name, default)
        if value is None:
            return None
        if isinstance(value, bool):
            raise InvalidConfig(f"{name}: expected a number, got {value!r}")
        try:
            return float(value)
        except (TypeError, ValueError):
            raise InvalidConfig(f"{name}: expected a number, got {value!r}") from None

    def get_bool(self, name: str, default: bool = False) -> bool:
        value = self.raw.get(name, default)
        if isinstance(value, str):
            if value.lower() in ("true", "1", "yes", "on"):
                return True
            if value.lower() in ("false", "0", "no", "off", ""):
                return False
            raise InvalidConfig(f"{name}: expected true or false, got {value!r}")
        return bool(value)

    def get_str(self, name: str, default: str | None = None) -> str | None:
        value = self.raw.get(name, default)
        return None if value is None else str(value)

    @property
    def batch_size(self) -> int | None:
        """The `batch_size` parameter, 1 when it is not set (None when the config says null)."""
        return self.get_int("batch_size", 1)

    @property
    def warmup_steps(self) -> int:
        return _env_int(WARMUP_STEPS_ENV, 0) or 0

    @property
    def steps(self) -> int:
        steps = _env_int(STEPS_ENV, 0)
        return 10 if steps is None else steps

    @property
    def epochs(self) -> int | None:
        """TUNEBENCH_TRIAL_EPOCHS: how many epochs the harness wants the trial to span, or None."""
        return _env_int(TRIAL_EPOCHS_ENV, 1)

    def dataloader_kwargs(self) -> dict[str, Any]:
        """num_workers, pin_memory and, only with workers, prefetch_factor and persistent_workers,
        as torch.utils.data.DataLoader requires (it rejects those two when num_workers is 0)."""
        workers = self.get_int("num_workers", 0)
        kwargs: dict[str, Any] = {"num_workers": workers, "pin_memory": self.get_bool("pin_memory", False)}
        # A null num_workers stays a TypeError here, as it always was; the cast only tells the type checker.
        if cast(int, workers) > 0:
            if "prefetch_factor" in self.raw:
                kwargs["prefetch_factor"] = self.get_int("prefetch_factor")
            kwargs["persistent_workers"] = self.get_bool("persistent_workers", False)
        return kwargs


def config() -> Config:
    """The trial's configuration (TUNEBENCH_CONFIG)."""
    return Config()


def _probe_parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog="tunebench", add_help=False)  # prog: sys.argv may be empty


def _action_class(action: str) -> type[argparse.Action]:
    """The class argparse makes for `action="..."`, found through its public API: the classes
    themselves (argparse._StoreTrueAction...) are private names."""
    return type(_probe_parser().add_argument("--x", action=action))


_NO_VALUE_ACTIONS: tuple[type[argparse.Action], ...] = (
    _action_class("help"),
    _action_class("version"),
    type(_probe_parser().add_subparsers()),
)


def bind_argparse(parser: argparse.ArgumentParser, cfg: Config | None = None) -> dict[str, Any]:
    """Makes the trial's config values the parser's defaults, so that `args` carries them and
    arguments given on the command line still win. Call it before parser.parse_args(). A value is
    converted with the action's `type`; store_true/store_false get a bool. Outside a trial (no
    TUNEBENCH_CONFIG) nothing changes. Returns the defaults applied."""
    if cfg is None:
        if CONFIG_ENV not in os.environ:
            return {}
        cfg = Config()
    keys = {key.replace("-", "_"): key for key in cfg.raw}
    defaults: dict[str, Any] = {}
    # The one private attribute: argparse has no public list of a parser's arguments (their dest,
    # type, nargs and choices), and parse_known_args([]) would stop at a required one.
    for action in parser._actions:  # noqa: SLF001
        key = keys.get(action.dest)
        if key is None or isinstance(action, _NO_VALUE_ACTIONS):
            continue
        defaults[action.dest] = _argparse_value(action, cfg, key)
        if action.option_strings:
            action.required = False  # the config supplies it
    parser.set_defaults(**defaults)
    return defaults


_FLAG_ACTIONS: tuple[type[argparse.Action], ...] = (_action_class("store_true"), _action_class("store_false")) + (
    (argparse.BooleanOptionalAction,) if hasattr(argparse, "BooleanOptionalAction") else ()  # Python >= 3.9
)
_COUNT_ACTION = _action_class("count")
_APPEND_ACTION = _action_class("append")
# Objects to the type checker: argparse's stubs type an action's `type` as a function of the text.
_PLAIN_TYPES: tuple[object, ...] = (int, float, str, bool)


def _argparse_value(action: argparse.Action, cfg: Config, key: str) -> Any:
    if isinstance(action, _FLAG_ACTIONS):
        return cfg.get_bool(key)
    if isinstance(action, _COUNT_ACTION):
        return cfg.get_int(key)
    value = cfg.get(key)
    many = action.nargs in ("*", "+") or isinstance(action.nargs, int) or isinstance(action, _APPEND_ACTION)
    if many:
        return [_convert(action, key, v) for v in (value if isinstance(value, list) else [value])]
    return _convert(action, key, value)


def _convert(action: argparse.Action, key: str, value: Any) -> Any:
    convert = action.type
    if convert is None or value is None:
        converted = value
    elif convert in _PLAIN_TYPES:
        getters: dict[object, Callable[[Config, str], object]] = {
            int: Config.get_int, float: Config.get_float, str: Config.get_str, bool: Config.get_bool
        }
        converted = getters[convert](Config({key: value}), key)
    else:
        # argparse types take the text of an argument.
        text = value if isinstance(value, str) else json.dumps(value)
        try:
            converted = convert(text)
        except (TypeError, ValueError, argparse.ArgumentTypeError) as error:
            name = action.option_strings[0] if action.option_strings else action.dest
            raise InvalidConfig(f"{key}: {value!r} is not accepted by the type of {name}: {error}") from None
    if action.choices is not None and converted not in action.choices:
        raise InvalidConfig(f"{key}: expected one of {', '.join(map(repr, action.choices))}, got {value!r}")
    return converted


def count_samples(batch: object) -> int:
    """Samples in a batch: shape[0] of a tensor or array; of a tuple or list, that of its first
    element that has a shape (nested too: ((ids, mask), y)); of a dict (HF BatchEncoding too), that
    of its first tensor value; of a list of plain values (strings, numbers, a dict per sample), its
    length. Raises TypeError for anything else: pass samples= to StepTimer.step() then."""
    if isinstance(batch, list) and not any(isinstance(x, (list, tuple)) or _first_dim(x) is not None for x in batch):
        return len(batch)  # strings, numbers, one record (dict) per sample
    count = _count(batch)
    if count is not None:
        return count
    raise TypeError(
        f"tunebench.count_samples: cannot tell how many samples a {type(batch).__name__} batch holds "
        "(no tensor or array in it); pass samples= to timer.step(), an int or a function of the batch"
    )


def _count(value: object) -> int | None:
    if isinstance(value, Mapping):
        return next((n for n in map(_count, value.values()) if n is not None), None)
    if isinstance(value, (list, tuple)):
        return next((n for n in map(_count, value) if n is not None), None)
    return _first_dim(value)


def _first_dim(value: object) -> int | None:
    shape = getattr(value, "shape", None)
    try:
        return int(shape[0]) if shape is not None and len(shape) >= 1 else None
    except TypeError:
        return None


class EmptyCachePolicy:
    """never | every-step | every-<N> | on-oom: when to call torch.cuda.empty_cache()."""

    def __init__(self, policy: str | None = "never", torch: Torch = None) -> None:
        policy = policy or "never"
        match = re.fullmatch(r"every-(\d+)", policy)
        if policy not in ("never", "every-step", "on-oom") and not (match and int(match.group(1)) > 0):
            raise InvalidConfig(f"empty_cache: expected never, every-step, every-<N> or on-oom, got {policy!r}")
        self.policy = policy
        self.every = 1 if policy == "every-step" else int(match.group(1)) if match else 0
        self.torch = torch if torch is not None else torch_module()
        self.calls = 0
        self.seconds = 0.0

    def _cuda(self) -> bool:
        t = self.torch
        return bool(t is not None and t.cuda.is_available())

    def empty_cache(self) -> None:
        """Synchronizes, frees the cache and counts the call and its time (CUDA only)."""
        if not self._cuda():
            return
        start = time.perf_counter()
        self.torch.cuda.synchronize()
        self.torch.cuda.empty_cache()
        self.seconds += time.perf_counter() - start
        self.calls += 1

    def after_step(self, step_index: int) -> None:
        if self.every and (step_index + 1) % self.every == 0:
            self.empty_cache()

    def run(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """Runs one step; with on-oom, an OOM frees the cache and the step is retried once."""
        try:
            return fn(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - re-raised unless it is an OOM we handle
            if self.policy != "on-oom" or not is_oom(error):
                raise
            self.empty_cache()
            return fn(*args, **kwargs)


def is_oom(error: BaseException) -> bool:
    """OOM by exception type first (torch.cuda.OutOfMemoryError, MemoryError), then by message."""
    # torch's own OOM type exists only where torch is imported: importing it here would cost seconds
    t = _override_or_imported_torch()
    oom_type = getattr(getattr(t, "cuda", None), "OutOfMemoryError", None) if t is not None else None
    if isinstance(oom_type, type) and isinstance(error, oom_type):
        return True
    if isinstance(error, MemoryError) or type(error).__name__ == "OutOfMemoryError":
        return True
    text = str(error)
    return any(p.search(text) for p in _OOM_PATTERNS)


def apply_allocator_env(cfg: Config) -> dict[str, str]:
    """Sets PYTORCH_CUDA_ALLOC_CONF and PYTORCH_ALLOC_CONF from the `alloc_conf` parameter. Call it
    before anything initialises CUDA: the allocator reads them once. Returns what took effect."""
    conf = cfg.get_str("alloc_conf")
    if conf:
        for name in ALLOC_CONF_ENVS:
            os.environ[name] = conf
    return {k: os.environ[k] for k in ALLOC_CONF_ENVS if k in os.environ}


def precision_context(
    precision: str | None, device_type: str = "cpu", torch: Torch = None
) -> tuple[ContextManager[Any], Any]:
    """fp32: no autocast; bf16 / fp16: torch.autocast. Returns (context, grad_scaler or None);
    fp16 gets a GradScaler on CUDA, where it prevents gradient underflow."""
    precision = precision or "fp32"
    if precision not in ("fp32", "bf16", "fp16"):
        raise InvalidConfig(f"precision: expected fp32, bf16 or fp16, got {precision!r}")
    if precision == "fp32":
        return contextlib.nullcontext(), None
    t = torch if torch is not None else torch_module()
    if t is None:
        raise RuntimeError(f"precision {precision} needs torch")
    dtype = t.bfloat16 if precision == "bf16" else t.float16
    scaler = None
    if precision == "fp16" and device_type == "cuda":
        # torch.amp.GradScaler("cuda") since torch 2.3; torch.cuda.amp.GradScaler before it (deprecated after)
        amp: Any = getattr(t, "amp", None)
        scaler = amp.GradScaler("cuda") if hasattr(amp, "GradScaler") else t.cuda.amp.GradScaler()
    return t.autocast(device_type=device_type, dtype=dtype), scaler


def _override_or_imported_torch() -> Torch:
    return _torch_override if _torch_override is not None else sys.modules.get("torch")


def _model_device_type(model: Torch) -> str | None:
    for tensors in (model.parameters, getattr(model, "buffers", None)):
        first = next(iter(tensors()), None) if tensors is not None else None
        if first is not None:
            device_type: str = first.device.type
            return device_type
    return None


class StepTimer:
    """Times steps, separating the wait for data from compute. On CUDA it synchronizes before every
    clock read, so that queued kernels are counted in the step that launched them.

    The device: `device_type` ("auto", "cpu", "cuda" or a torch.device), else that of `model`'s
    first parameter, else "auto": CUDA when torch is imported and torch.cuda.is_available(). In a
    trial (TUNEBENCH_STEPS set, or `steps` given), batches() yields warm-up + steps batches across
    epochs, split into `epochs` (TUNEBENCH_TRIAL_EPOCHS) when the harness asks for them; `done` turns
    True once they are taken. Outside a trial, each batches() call is one plain pass.

    The work a training script does between epochs (eval, checkpoint save) is registered with
    on_epoch_end(fn, phase=...): batches() runs it at the end of every epoch it yields, inside a trial
    too (at each epoch boundary and at the trial's end), in timer.phase(name), which reports it.

    Every option after `events` is keyword-only: `StepTimer(model=model)`, `StepTimer(device_type="cpu")`."""

    def __init__(
        self,
        events: Events | None = None,
        *,
        device_type: str | Torch | None = None,
        torch: Torch = None,
        clock: Callable[[], float] = time.perf_counter,
        warmup_steps: int | None = None,
        model: Torch = None,
        steps: int | None = None,
        epochs: int | None = None,
    ) -> None:
        self.events = events or Events()
        self.torch: Torch = torch
        self.device_type = self._resolve_device(device_type, model)
        self.clock = clock
        self.warmup_steps = (_env_int(WARMUP_STEPS_ENV, 0) or 0) if warmup_steps is None else warmup_steps
        steps = _env_int(STEPS_ENV, 0) if steps is None else steps
        self.total_steps = None if steps is None else self.warmup_steps + steps
        self.epochs = _env_int(TRIAL_EPOCHS_ENV, 1) if epochs is None else epochs
        self.index = 0  # steps reported
        self.epoch = 0
        self._yielded = 0
        self._epoch_used = False
        self._trial_over = False
        self._batch: Any = None
        self._wait = 0.0
        self._step_start: float | None = None
        # (phase, fn): the work batches() runs at each epoch's end
        self._epoch_end: list[tuple[str, Callable[[int], object]]] = []
        self.current_phase: str | None = None  # the phase running now (eval, checkpoint...), None while training
        self._device_peak_floor = 0  # CUDA: the peak before a phase reset the allocator's counter
        global _active_timer
        _active_timer = self

    def _resolve_device(self, device_type: str | Torch | None, model: Torch) -> str:
        if device_type is None:
            wanted = (_model_device_type(model) if model is not None else None) or "auto"
        elif isinstance(device_type, str):
            if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", device_type):
                raise ValueError(f"StepTimer: device_type must be 'auto', 'cpu', 'cuda' or a torch.device, got {device_type!r}")
            wanted = device_type.split(":")[0]
        elif isinstance(getattr(device_type, "type", None), str):
            wanted = device_type.type  # a torch.device
        else:
            raise TypeError(f"StepTimer: device_type must be 'auto', 'cpu', 'cuda' or a torch.device, got {device_type!r}")
        if wanted == "auto":
            # A script that has not imported torch has no CUDA work to wait for, and a script that
            # does not use torch should not pay for importing it (time and peak RSS).
            t = self.torch or _override_or_imported_torch()
            self.torch = t
            return "cuda" if t is not None and t.cuda.is_available() else "cpu"
        if wanted == "cuda":
            t = self.torch = self.torch or torch_module()
            if t is None or not t.cuda.is_available():
                version = getattr(t, "__version__", "?")
                why = "torch is not installed" if t is None else f"torch {version} sees no CUDA device (torch.cuda.is_available() is False)"
                raise RuntimeError(
                    f"StepTimer(device_type='cuda'): {why}. Use StepTimer(model=model) to time on the "
                    "device the model is on, or StepTimer() to pick CUDA only where it is available"
                )
        return wanted

    @property
    def done(self) -> bool:
        """True once the trial has its warm-up + steps; a script's own epoch loop can break on it."""
        return self.total_steps is not None and (self._trial_over or self.index >= self.total_steps)

    def _now(self) -> float:
        if self.device_type == "cuda" and self.torch is not None:
            self.torch.cuda.synchronize()
        return self.clock()

    def batches(self, iterable: Iterable[_T]) -> Iterator[_T]:
        """Yields from `iterable`, timing how long each batch took to arrive. Outside a trial: one
        pass. In a trial: until warm-up + steps batches are taken, starting a new epoch (a new
        iterator) when the iterable runs out or the epoch has its share of the trial's batches; a
        one-shot iterator that runs out ends the call. The on_epoch_end work runs after each epoch
        that yielded a batch (a loop that breaks out early skips it)."""
        if self.done:
            return
        if self._epoch_used:  # a later call is a later epoch
            self._next_epoch()
        total = self.total_steps
        per_epoch = -(-total // self.epochs) if total is not None and self.epochs else None
        while True:
            iterator = iter(iterable)
            one_shot = iterator is iterable
            taken, exhausted = yield from self._epoch_batches(iterator, per_epoch)
            # Dropping the iterator shuts a DataLoader's workers down (unless they are persistent).
            del iterator
            if taken > 0:
                self._run_epoch_end()
            if total is None or self._trial_over or (exhausted and (one_shot or taken == 0)):
                return
            self._next_epoch()

    def _epoch_batches(self, iterator: Iterator[_T], per_epoch: int | None) -> Generator[_T, None, tuple[int, bool]]:
        """One epoch's batches; returns (batches taken, whether the iterator ran out)."""
        total = self.total_steps
        taken = 0
        while per_epoch is None or taken < per_epoch:
            if taken == 0:
                # Training starts (again): a kill from here on, which leaves no time to report, was in train.
                self.events.emit({"event": "phase", "at": "start", "phase": "train", "epoch": self.epoch, "step": self.index})
            start = self._now()
            try:
                batch = next(iterator)
            except StopIteration:
                return taken, True
            end = self._now()
            self._wait = end - start
            self._step_start = start
            self._batch = batch
            self._yielded += 1
            self._epoch_used = True
            taken += 1
            yield batch
            if total is not None and self._yielded >= total:
                self._trial_over = True
                break
        return taken, False

    @overload
    def on_epoch_end(self, fn: None = None, *, phase: str = "eval") -> Callable[[_EpochWork], _EpochWork]: ...

    @overload
    def on_epoch_end(self, fn: _EpochWork, *, phase: str = "eval") -> _EpochWork: ...

    def on_epoch_end(self, fn: Callable[[int], object] | None = None, *, phase: str = "eval") -> object:
        """Registers fn(epoch) to run at the end of every epoch that batches() yields, in
        timer.phase(phase): `timer.on_epoch_end(evaluate, phase="eval")`, or as a decorator,
        `@timer.on_epoch_end(phase="checkpoint")`. Work runs in the order it was registered.
        Returns fn."""
        _check_phase_name(phase)
        if fn is None:
            return lambda f: self.on_epoch_end(f, phase=phase)
        if not callable(fn):
            raise TypeError(f"StepTimer.on_epoch_end: expected a function of the epoch, got {fn!r}")
        self._epoch_end.append((phase, fn))
        return fn

    def _run_epoch_end(self) -> None:
        for phase, fn in self._epoch_end:
            with self.phase(phase):
                fn(self.epoch)

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Runs a phase of training other than the steps, such as `with timer.phase("eval"):`. It is
        reported with `phase` events (at start, and at end with its seconds and memory), so that the
        harness sees it ran and where a trial failed: an exception raised inside is tagged with the
        phase, and main() reports it (`oom in eval (epoch 1)`)."""
        _check_phase_name(name)
        outer = self.current_phase
        self.current_phase = name
        where = {"phase": name, "epoch": self.epoch, "step": self.index}
        self.events.emit({"event": "phase", "at": "start", **where})
        start = self._now()
        before = self._phase_memory_start()
        try:
            yield
        except BaseException as error:
            _tag_failure(error, where)
            raise
        finally:
            self.current_phase = outer
        seconds = self._now() - start
        self.events.emit({"event": "phase", "at": "end", **where, "seconds": seconds, **self._phase_memory(before)})

    def where(self) -> Where:
        """Where the script is now, for a failure report: {"phase", "epoch", "step"}. The phase is
        the one running, else "train" once a batch was taken, else "setup"."""
        phase = self.current_phase or ("train" if self._yielded > 0 else "setup")
        return {"phase": phase, "epoch": self.epoch, "step": self.index}

    def _phase_memory_start(self) -> int:
        """CUDA: the peak so far is kept and the allocator's counter reset, so the phase gets its own
        peak. CPU: the process's peak RSS so far (it cannot be reset)."""
        if self._cuda():
            self._device_peak_floor = max(self._device_peak_floor, int(self.torch.cuda.max_memory_allocated()))
            self.torch.cuda.reset_peak_memory_stats()
            return 0
        return _peak_rss()

    def _phase_memory(self, before: int) -> dict[str, Any]:
        if self._cuda():
            return {"peak_bytes": int(self.torch.cuda.max_memory_allocated()), "peak_scope": "phase", "device": "cuda"}
        peak = _peak_rss()
        # The process's peak can only be read since it started: it is the phase's when the phase raised it.
        return {"peak_bytes": peak, "peak_scope": "phase" if peak > before else "process", "device": "cpu"}

    def _cuda(self) -> bool:
        return bool(self.device_type == "cuda" and self.torch is not None and self.torch.cuda.is_available())

    def _next_epoch(self) -> None:
        self.epoch += 1
        self._epoch_used = False

    @contextlib.contextmanager
    def step(self, samples: SupportsInt | Callable[[Any], SupportsInt] | None = None) -> Iterator[None]:
        """Times one step. `samples`: an int, a function of the batch, or omitted to count the batch
        that batches() yielded last with count_samples()."""
        count: Any = samples
        if samples is None or callable(samples):
            if self._batch is None:
                raise TypeError("StepTimer.step(): without samples= it counts the batch from timer.batches(); pass samples=")
            count = count_samples(self._batch) if samples is None else samples(self._batch)
        start = self._step_start if self._step_start is not None else self._now()
        yield
        end = self._now()
        self.events.emit({
            "event": "step",
            "samples": count if isinstance(count, (int, float)) else int(count),  # numpy and 0-d tensors too
            "seconds": end - start,
            "data_wait_seconds": self._wait,
            "warmup": self.index < self.warmup_steps,
            "epoch": self.epoch,
            "t": time.time(),  # when the step ended: the harness's timeline of the trial
            **self._step_memory(),
        })
        self.index += 1
        self._wait = 0.0
        self._step_start = None
        self._batch = None

    def _step_memory(self) -> dict[str, Any]:
        """The process's peak so far, as the step ends (a confirmation runs until it stops growing):
        CUDA's max_memory_allocated on a GPU, else the peak RSS; and on Linux the peak address space,
        what prlimit --as caps (a trial stopped at its plateau sends no memory event)."""
        t = self.torch
        out: dict[str, Any]
        if self.device_type == "cuda" and t is not None:
            out = {"memory_bytes": max(int(t.cuda.max_memory_allocated()), self._device_peak_floor), "device": "cuda"}
        else:
            out = {"memory_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "device": "cpu"}
        vm = _peak_address_space()
        if vm is not None:
            out["address_space_bytes"] = vm
        return out

    def finish(self, extra: Mapping[str, Any] | None = None) -> None:
        """Reports peak memory, then `done`."""
        memory = peak_memory(self.device_type, self.torch)
        if memory["device"] == "cuda":  # a phase reset the allocator's peak: the trial's is the larger
            memory["peak_bytes"] = max(memory["peak_bytes"], self._device_peak_floor)
        self.events.emit(dict({"event": "memory", **memory}, **(extra or {})))
        self.events.emit({"event": "done", "t": time.time()})


def _check_phase_name(name: object) -> None:
    if not isinstance(name, str) or not PHASE_NAME.fullmatch(name):
        raise ValueError(f"StepTimer: a phase name is lower-case letters, digits, _ and - (at most 32), such as 'eval', got {name!r}")


def _tag_failure(error: BaseException, where: Where) -> None:
    """Marks where an exception was raised; the innermost phase wins."""
    if getattr(error, "tunebench_phase", None) is None:
        try:
            setattr(error, "tunebench_phase", dict(where))  # noqa: B010 - an attribute BaseException does not declare
        except (AttributeError, TypeError):
            pass  # an exception type without attributes: main() falls back to the timer's position


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


def _peak_address_space() -> int | None:
    """VmPeak from /proc/self/status: the quantity that prlimit --as caps (Linux only)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmPeak:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def peak_memory(device_type: str = "cpu", torch: Torch = None) -> dict[str, Any]:
    """CUDA: max_memory_allocated/reserved and num_alloc_retries; always: the process's peak RSS
    and, on Linux, its peak address space."""
    rss = _peak_rss()
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


@overload
def main(fn: Callable[[], object], events: Events | None = None, setup: None = None) -> None: ...


@overload
def main(fn: Callable[[_S], object], events: Events | None = None, *, setup: Callable[[], _S]) -> None: ...


@overload
def main(fn: Callable[[_S], object], events: Events | None, setup: Callable[[], _S]) -> None: ...


def main(fn: Callable[..., object], events: Events | None = None, setup: Callable[[], object] | None = None) -> None:
    """Runs fn(), or fn(setup()) when `setup` is given. InvalidConfig: an `error` event and exit 87
    (outcome invalid); an OOM: an `oom` event and exit 86; any other exception: exit 1 (a crash).
    Every failure writes its full traceback to stderr and a `phase` event (at "failed") that says
    where it happened: the phase (setup, train, eval, checkpoint...), the epoch and the steps done;
    the `oom` event carries the same fields. SystemExit and KeyboardInterrupt pass through.

    Under the harness's warm start (TUNEBENCH_WARM_SERVER=fork) this process becomes the warm
    server instead: setup() runs once here, and every trial is a fork() of this process that runs
    fn(state) with the trial's config, arguments, memory cap and events file (see warm_start.md)."""
    if os.environ.get(WARM_SERVER_ENV) == "fork":
        from tunebench.warm import serve  # noqa: PLC0415 - only the warm server needs it

        serve(lambda state: _start(fn, setup is not None, state, None), setup)
        return
    (events or Events()).emit({"event": "mark", "name": "imported", "t": time.time()})
    state = setup() if setup is not None else None
    _start(fn, setup is not None, state, events)


def _start(fn: Callable[..., object], with_state: bool, state: object, events: Events | None) -> None:
    """One trial: the script's function once, or a bracket session of in-process attempts."""
    (events or Events()).emit({"event": "mark", "name": "start", "t": time.time()})
    control = os.environ.get(BRACKET_ENV)
    if control:
        _bracket(fn, with_state, state, control, events or Events())
        return
    _run(fn, with_state, state, events)


def _run(fn: Callable[..., object], with_state: bool, state: object, events: Events | None) -> None:
    events = events or Events()
    try:
        fn(state) if with_state else fn()
    except InvalidConfig as error:
        events.emit({"event": "error", "message": str(error)})
        print(f"tunebench: invalid configuration: {error}", file=sys.stderr)
        sys.exit(INVALID_EXIT_CODE)
    except Exception as error:  # noqa: BLE001 - classified here; BaseException passes through
        where = failure_phase(error)
        oom = is_oom(error)
        events.emit({"event": "phase", "at": "failed", **where, "error": type(error).__name__, "t": time.time()})
        if oom:
            events.emit({"event": "oom", "message": str(error)[:2000], **where})
        # The summary line first and the traceback last: the harness keeps the tail of stderr.
        what = "out of memory" if oom else f"{type(error).__name__}"
        print(f"tunebench: {what} in {describe_phase(where)}; the traceback:", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        sys.stderr.flush()
        sys.exit(OOM_EXIT_CODE if oom else 1)


def failure_phase(error: BaseException) -> Where:
    """Where `error` was raised: the phase that tagged it, else the last StepTimer's position, else setup."""
    tagged = getattr(error, "tunebench_phase", None)
    if isinstance(tagged, dict):
        return dict(tagged)
    if _active_timer is not None:
        return _active_timer.where()
    return {"phase": "setup", "epoch": 0, "step": 0}


def describe_phase(where: Mapping[str, Any]) -> str:
    """`eval (epoch 1, after 12 steps)`."""
    steps = where["step"]
    return f"{where['phase']} (epoch {where['epoch']}, after {steps} step{'' if steps == 1 else 's'})"


# A bracket session (max-batch `bracket: in-process`): the harness writes one JSON line per attempt
# to the control file, {"argv": [...], "env": {...}} (the attempt's own events file in env), or
# {"op": "end"}; each attempt runs fn in this process and ends with an `attempt` event in its events
# file. A pass here is a lower bound and an OOM only a hint: the harness decides in fresh processes.
BRACKET_POLL_SECONDS = 0.005
BRACKET_IDLE_SECONDS = 600.0  # no word from the harness for this long: the session ends


def _bracket(fn: Callable[..., object], with_state: bool, state: object, control: str, events: Events) -> None:
    global _active_timer
    base_env = dict(os.environ)
    for request in _control_lines(control):
        if request.get("op") == "end":
            break
        os.environ.clear()
        os.environ.update(base_env)
        os.environ.update({str(k): str(v) for k, v in dict(request.get("env", {})).items()})
        os.environ.pop(BRACKET_ENV, None)
        if isinstance(request.get("argv"), list):
            sys.argv = [str(a) for a in request["argv"]]
        _active_timer = None
        attempt = _attempt(fn, with_state, state)
        _active_timer = None
        Events().emit({"event": "attempt", **attempt, "t": time.time()})
    events.emit({"event": "done", "t": time.time()})


def _control_lines(path: str) -> Iterator[dict[str, Any]]:
    """The control file's lines as they are appended; ends after BRACKET_IDLE_SECONDS of silence."""
    buffered = b""
    offset = 0
    idle_since = time.monotonic()
    while time.monotonic() - idle_since < BRACKET_IDLE_SECONDS:
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                chunk = f.read()
        except FileNotFoundError:
            chunk = b""
        offset += len(chunk)
        buffered += chunk
        if b"\n" not in buffered:
            time.sleep(BRACKET_POLL_SECONDS)
            continue
        lines = buffered.split(b"\n")
        buffered = lines.pop()
        for line in lines:
            if line.strip():
                message = json.loads(line)
                yield message if isinstance(message, dict) else {"op": "end"}
        idle_since = time.monotonic()


def _attempt(fn: Callable[..., object], with_state: bool, state: object) -> dict[str, Any]:
    """fn once in this process, its memory counters reset before and its cache emptied after."""
    import gc  # noqa: PLC0415

    t = _override_or_imported_torch()
    cuda = _cuda_ready(t)
    if cuda:
        t.cuda.reset_peak_memory_stats()
    start = time.monotonic()
    out: dict[str, Any] = {"ok": True, "oom": False}
    try:
        fn(state) if with_state else fn()
    except Exception as error:  # noqa: BLE001 - every failure of an attempt is its result
        out = {"ok": False, "oom": is_oom(error), "error": type(error).__name__, "message": str(error)[:500]}
        error.__traceback__ = None  # the frames hold the attempt's tensors
        del error
    out["seconds"] = time.monotonic() - start
    gc.collect()
    if _cuda_ready(t):
        out["peak_device_bytes"] = int(t.cuda.max_memory_allocated())
        t.cuda.synchronize()
        t.cuda.empty_cache()
    return out


def _cuda_ready(t: Torch) -> bool:
    try:
        return bool(t is not None and t.cuda.is_initialized())
    except Exception:  # noqa: BLE001 - a stand-in torch without cuda
        return False
