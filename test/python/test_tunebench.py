"""Unit tests of the Python adapter, run under /usr/bin/python3 by test/integration/python-adapter.test.ts.
CUDA branches use a stand-in torch that records the order of calls; the rest uses real torch,
DataLoader worker processes, argparse and subprocesses."""

import argparse
import json
import mmap
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
import weakref
from collections import UserDict
from types import SimpleNamespace
from unittest import mock

ADAPTER = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "harness", "workloads", "python"))
sys.path.insert(0, ADAPTER)
import tunebench  # noqa: E402


class CleanEnv(unittest.TestCase):
    """Each test starts without the protocol's variables (whatever the caller's environment holds),
    with a temporary folder and an events file in it."""

    def setUp(self):
        patcher = mock.patch.dict(os.environ)
        patcher.start()
        self.addCleanup(patcher.stop)
        for key in [k for k in os.environ if k.startswith("TUNEBENCH_")]:
            del os.environ[key]
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.dir = folder.name
        self.path = os.path.join(self.dir, "events.jsonl")
        tunebench._active_timer = None  # noqa: SLF001 - each test's failures are located by its own timer

    def trial(self, warmup, steps, epochs=None):
        os.environ.update({"TUNEBENCH_WARMUP_STEPS": str(warmup), "TUNEBENCH_STEPS": str(steps)})
        if epochs is not None:
            os.environ["TUNEBENCH_TRIAL_EPOCHS"] = str(epochs)

    def events(self, kind=None, timed=False):
        """The events written, without the timeline's marks and times (timed=True: as written)."""
        if not os.path.exists(self.path):
            return []
        with open(self.path, encoding="utf-8") as f:
            events = [json.loads(line) for line in f]
        if not timed:
            events = [_untimed(e) for e in events if e["event"] != "mark"]
        return [e for e in events if kind is None or e["event"] == kind]

    def timer(self, **kwargs):
        return tunebench.StepTimer(events=tunebench.Events(self.path), **kwargs)


def _untimed(event):
    """An event without its `t` (the unix time the timeline reads): what a test compares."""
    return {k: v for k, v in event.items() if k != "t"}


class CallLog(list):
    pass


class FakeOutOfMemoryError(RuntimeError):
    pass


class FakeCuda:
    OutOfMemoryError = FakeOutOfMemoryError

    def __init__(self, log):
        self.log = log

    def is_available(self):
        self.log.append("is_available")
        return True

    def synchronize(self):
        self.log.append("synchronize")

    def empty_cache(self):
        self.log.append("empty_cache")

    def max_memory_allocated(self):
        return 123

    def max_memory_reserved(self):
        return 456

    def memory_stats(self):
        return {"num_alloc_retries": 2}


class FakeTorch:
    bfloat16 = "bf16-dtype"
    float16 = "fp16-dtype"

    def __init__(self):
        self.log = CallLog()
        self.cuda = FakeCuda(self.log)

    def autocast(self, device_type, dtype):
        self.log.append(("autocast", device_type, dtype))
        return "autocast-context"


class ConfigTests(CleanEnv):
    def test_typed_getters(self):
        c = tunebench.Config({"batch_size": 64, "pin_memory": "true", "lr": "0.1", "precision": "bf16"})
        self.assertEqual(c.batch_size, 64)
        self.assertTrue(c.get_bool("pin_memory"))
        self.assertEqual(c.get_float("lr"), 0.1)
        self.assertEqual(c.get_str("precision"), "bf16")
        with self.assertRaises(tunebench.InvalidConfig):
            tunebench.Config({"batch_size": 2.5}).batch_size
        with self.assertRaises(tunebench.InvalidConfig):
            tunebench.Config({"pin_memory": "maybe"}).get_bool("pin_memory")

    def test_reads_the_environment(self):
        os.environ["TUNEBENCH_CONFIG"] = json.dumps({"batch_size": 8})
        try:
            self.assertEqual(tunebench.config().batch_size, 8)
        finally:
            del os.environ["TUNEBENCH_CONFIG"]

    def test_config_problems_are_invalid_config(self):
        self.assertTrue(issubclass(tunebench.InvalidConfig, ValueError))
        with self.assertRaises(tunebench.InvalidConfig):
            tunebench.Config([1, 2])
        os.environ["TUNEBENCH_CONFIG"] = "[1]"
        with self.assertRaises(tunebench.InvalidConfig):
            tunebench.config()
        os.environ["TUNEBENCH_CONFIG"] = "{not json"
        with self.assertRaises(tunebench.InvalidConfig):
            tunebench.config()
        c = tunebench.Config({"n": "many", "lr": "fast", "flag": True})
        for getter in (lambda: c.get_int("n"), lambda: c.get_float("lr"), lambda: c.get_float("flag")):
            with self.assertRaises(tunebench.InvalidConfig):
                getter()
        with self.assertRaises(tunebench.InvalidConfig) as caught:
            tunebench.reject("dim (30) must be a multiple of heads (4)")
        self.assertEqual(str(caught.exception), "dim (30) must be a multiple of heads (4)")

    def test_epochs_come_from_the_protocol(self):
        self.assertIsNone(tunebench.config().epochs)
        os.environ["TUNEBENCH_TRIAL_EPOCHS"] = "3"
        self.assertEqual(tunebench.config().epochs, 3)
        for bad in ("0", "two"):
            os.environ["TUNEBENCH_TRIAL_EPOCHS"] = bad
            with self.assertRaises(tunebench.InvalidConfig):
                tunebench.config().epochs

    def test_dataloader_kwargs_follow_pytorch_rules(self):
        self.assertEqual(tunebench.Config({"num_workers": 0, "prefetch_factor": 4, "persistent_workers": True}).dataloader_kwargs(), {"num_workers": 0, "pin_memory": False})
        self.assertEqual(
            tunebench.Config({"num_workers": 4, "prefetch_factor": 4, "persistent_workers": True, "pin_memory": True}).dataloader_kwargs(),
            {"num_workers": 4, "pin_memory": True, "prefetch_factor": 4, "persistent_workers": True},
        )


class EventsTests(CleanEnv):
    """Who reports under torchrun: rank 0 alone, or every rank with its rank when TUNEBENCH_RANKS is set."""

    def setUp(self):
        super().setUp()
        os.environ.pop("RANK", None)

    def test_without_tunebench_ranks_only_rank_0_reports_and_events_carry_no_rank(self):
        for rank in ("1", "0"):
            os.environ["RANK"] = rank
            tunebench.Events(self.path).emit({"event": "done"})
        self.assertEqual(self.events(), [{"event": "done"}])

    def test_with_tunebench_ranks_every_rank_reports_its_rank(self):
        os.environ["TUNEBENCH_RANKS"] = "2"
        for rank in ("1", "0"):
            os.environ["RANK"] = rank
            tunebench.Events(self.path).emit({"event": "step", "samples": 8, "seconds": 0.1})
        os.environ.pop("RANK")  # a single process under TUNEBENCH_RANKS is rank 0
        tunebench.Events(self.path).emit({"event": "done"})
        self.assertEqual(
            self.events(),
            [
                {"event": "step", "samples": 8, "seconds": 0.1, "rank": 1},
                {"event": "step", "samples": 8, "seconds": 0.1, "rank": 0},
                {"event": "done", "rank": 0},
            ],
        )

    def test_ranks_writing_at_once_never_mix_their_lines(self):
        # Long lines (over a pipe's atomic 4 KiB and a buffered file's 8 KiB) from two processes at once.
        code = textwrap.dedent("""
            import sys, tunebench
            events = tunebench.Events(sys.argv[1])
            for i in range(300):
                events.emit({"event": "oom", "message": "x" * 20000, "i": i})
        """)
        env = dict(os.environ, PYTHONPATH=ADAPTER, TUNEBENCH_RANKS="2")
        procs = [
            subprocess.Popen([sys.executable, "-c", code, self.path], env=dict(env, RANK=str(rank)))
            for rank in (0, 1)
        ]
        for p in procs:
            self.assertEqual(p.wait(timeout=60), 0)
        events = self.events()  # json.loads of every line: a torn line fails here
        for rank in (0, 1):
            mine = [e["i"] for e in events if e["rank"] == rank]
            self.assertEqual(mine, list(range(300)))
        self.assertTrue(all(len(e["message"]) == 20000 for e in events))


class StepTimerTests(CleanEnv):
    def test_options_after_events_are_keyword_only(self):
        events = tunebench.Events(self.path)
        self.assertEqual(tunebench.StepTimer(events, device_type="cpu").events, events)
        with self.assertRaises(TypeError):
            tunebench.StepTimer(events, "cpu")

    def test_separates_data_wait_from_compute(self):
        # Clock reads: batch 1 asked, arrived, step done; batch 2 asked, arrived, step done; end of data.
        ticks = iter([0.0, 0.5, 2.0, 2.0, 2.25, 3.0, 3.0])
        timer = tunebench.StepTimer(events=tunebench.Events(self.path), clock=lambda: next(ticks), warmup_steps=1)
        for batch in timer.batches([[1, 2, 3, 4], [5, 6]]):
            with timer.step(samples=len(batch)):
                pass
        e = self.events("step")
        self.assertEqual([x["samples"] for x in e], [4, 2])
        self.assertEqual(e[0]["data_wait_seconds"], 0.5)
        self.assertEqual(e[0]["seconds"], 2.0)
        self.assertEqual(e[1]["data_wait_seconds"], 0.25)
        self.assertEqual([x["warmup"] for x in e], [True, False])

    def test_every_step_carries_the_peak_address_space_that_prlimit_caps(self):
        # A trial stopped at its plateau sends no memory event: its steps carry the capped peak.
        timer = tunebench.StepTimer(events=tunebench.Events(self.path), warmup_steps=0)
        held = []
        for _ in timer.batches([[1], [2]]):
            with timer.step(samples=1):
                held.append(mmap.mmap(-1, 2 * 2**30))  # 2 GiB more address space, never touched
        first, second = self.events("step")
        self.assertGreater(first["address_space_bytes"], first["memory_bytes"])
        # An earlier test may have raised the peak already, though not by a GiB past what this one holds.
        self.assertGreaterEqual(second["address_space_bytes"] - first["address_space_bytes"], 2**30)
        self.assertLess(second["memory_bytes"] - first["memory_bytes"], 2**30, "resident: not touched")

    def test_cuda_synchronizes_before_every_clock_read(self):
        torch = FakeTorch()
        clock = lambda: torch.log.append("clock") or 1.0  # noqa: E731
        timer = tunebench.StepTimer(events=tunebench.Events(self.path), device_type="cuda", torch=torch, clock=clock)
        for _ in timer.batches([1]):
            with timer.step(samples=1):
                torch.log.append("compute")
        reads = [i for i, x in enumerate(torch.log) if x == "clock"]
        self.assertEqual(len(reads), 4, "asked, arrived, step done, end of data")
        for i in reads:
            self.assertEqual(torch.log[i - 1], "synchronize", torch.log)
        timer.finish()
        memory = [x for x in self.events() if x["event"] == "memory"][0]
        self.assertEqual((memory["peak_bytes"], memory["max_memory_reserved"], memory["num_alloc_retries"]), (123, 456, 2))
        self.assertEqual(self.events()[-1], {"event": "done"})


    def test_step_counts_the_batch_when_samples_is_omitted(self):
        timer = self.timer(device_type="cpu")
        for _ in timer.batches([(FakeArray(5, 7), FakeArray(5, 7), FakeArray(5)), {"ids": FakeArray(3, 2)}, ["a", "b"]]):
            with timer.step():
                pass
        for _ in timer.batches([(FakeArray(6), FakeArray(6))]):
            with timer.step(samples=lambda b: 2 * b[0].shape[0]):
                pass
        self.assertEqual([e["samples"] for e in self.events("step")], [5, 3, 2, 12])
        with self.assertRaises(TypeError):
            with timer.step():  # no batch from batches() to count
                pass


class FakeArray:
    """Anything with a shape, as tensors and numpy arrays have."""

    def __init__(self, *shape):
        self.shape = tuple(shape)


class FakeParameter:
    def __init__(self, device_type):
        self.device = SimpleNamespace(type=device_type)


class FakeModel:
    def __init__(self, *device_types):
        self.devices = device_types

    def parameters(self):
        return iter(FakeParameter(d) for d in self.devices)

    def buffers(self):
        return iter(())


class FakeTorchWithoutCuda(FakeTorch):
    __version__ = "1.13.0+cpu"

    def __init__(self):
        super().__init__()
        self.cuda.is_available = lambda: self.log.append("is_available") or False
        self.cuda.synchronize = lambda: (_ for _ in ()).throw(AssertionError("Torch not compiled with CUDA enabled"))


class DeviceTests(CleanEnv):
    def tearDown(self):
        tunebench.set_torch(None)

    def test_auto_picks_cuda_only_where_torch_has_it(self):
        tunebench.set_torch(FakeTorchWithoutCuda())
        timer = self.timer()
        self.assertEqual(timer.device_type, "cpu")
        for _ in timer.batches([[1], [2]]):  # no synchronize: it would raise like torch without CUDA
            with timer.step():
                pass
        tunebench.set_torch(FakeTorch())
        self.assertEqual(self.timer().device_type, "cuda")
        self.assertEqual(self.timer(device_type="auto").device_type, "cuda")

    def test_device_from_the_model(self):
        tunebench.set_torch(FakeTorch())
        self.assertEqual(self.timer(model=FakeModel("cpu")).device_type, "cpu", "a CPU model on a CUDA machine")
        self.assertEqual(self.timer(model=FakeModel("cuda", "cpu")).device_type, "cuda", "the first parameter decides")
        self.assertEqual(self.timer(model=FakeModel()).device_type, "cuda", "no parameters: auto")
        self.assertEqual(self.timer(device_type="cpu", model=FakeModel("cuda")).device_type, "cpu", "an explicit device wins")
        self.assertEqual(self.timer(device_type=SimpleNamespace(type="cuda", index=0)).device_type, "cuda")
        self.assertEqual(self.timer(device_type="cuda:1").device_type, "cuda")

    def test_explicit_cuda_without_cuda_is_a_clear_error(self):
        tunebench.set_torch(FakeTorchWithoutCuda())
        with self.assertRaises(RuntimeError) as caught:
            self.timer(device_type="cuda")
        self.assertNotIsInstance(caught.exception, AssertionError)
        self.assertIn("StepTimer(model=model)", str(caught.exception))
        self.assertIn("torch.cuda.is_available() is False", str(caught.exception))
        with self.assertRaises(ValueError):
            self.timer(device_type="gpu")
        with self.assertRaises(TypeError):
            self.timer(device_type=0)

    def test_a_script_without_torch_does_not_import_it(self):
        code = "import sys, tunebench; t = tunebench.StepTimer(); print(t.device_type, 'torch' in sys.modules)"
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=ADAPTER))
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "cpu False"), r.stderr)


class CountSamplesTests(unittest.TestCase):
    def test_shapes_tuples_dicts_and_lists(self):
        ids, mask, y = FakeArray(8, 128), FakeArray(8, 128), FakeArray(8)
        self.assertEqual(tunebench.count_samples(ids), 8)
        self.assertEqual(tunebench.count_samples((ids, mask, y)), 8, "len() would say 3")
        self.assertEqual(tunebench.count_samples([ids, y]), 8)
        self.assertEqual(tunebench.count_samples(((ids, mask), y)), 8)
        self.assertEqual(tunebench.count_samples((["a", "b", "c"], FakeArray(3))), 3, "the first element with a shape")
        self.assertEqual(tunebench.count_samples({"text": ["a", "b"], "input_ids": FakeArray(2, 9), "labels": FakeArray(2)}), 2)
        self.assertEqual(tunebench.count_samples(({"input_ids": FakeArray(4, 9)}, FakeArray(4))), 4)
        self.assertEqual(tunebench.count_samples(["a", "b", "c"]), 3)
        self.assertEqual(tunebench.count_samples([1, 2, 3, 4]), 4)
        self.assertEqual(tunebench.count_samples([{"x": FakeArray(9)}, {"x": FakeArray(9)}]), 2, "one record per sample")

    def test_a_batch_encoding_like_mapping(self):
        class BatchEncoding(UserDict):  # as in transformers: attribute access reads the keys
            def __getattr__(self, name):
                try:
                    return self.data[name]
                except KeyError:
                    raise AttributeError(name) from None

        self.assertEqual(tunebench.count_samples(BatchEncoding(input_ids=FakeArray(6, 32), attention_mask=FakeArray(6, 32))), 6)

    def test_uncountable_batches_say_to_pass_samples(self):
        for batch in (object(), "text", ("a", "b"), FakeArray(), [["a", "b"], ["c", "d"]], {"text": ["a"]}):
            with self.assertRaises(TypeError) as caught:
                tunebench.count_samples(batch)
            self.assertIn("samples=", str(caught.exception))


class OneShot:
    """An iterator (iter() returns itself) over n numbered batches."""

    def __init__(self, n):
        self.left = iter(range(n))

    def __iter__(self):
        return self

    def __next__(self):
        return [next(self.left)]


class Reiterable:
    """Each iter() is a new epoch; records whether every earlier iterator was gone by then."""

    def __init__(self, n):
        self.n = n
        self.iterators = []
        self.earlier_dropped = []

    def __iter__(self):
        self.earlier_dropped.append(all(r() is None for r in self.iterators))
        it = OneShot(self.n)
        self.iterators.append(weakref.ref(it))
        return it


class BatchesTests(CleanEnv):
    def run_loop(self, timer, data):
        seen = []
        for batch in timer.batches(data):
            with timer.step():
                seen.append(batch[0])
        return seen

    def test_a_trial_takes_warmup_plus_steps_batches_across_epochs(self):
        self.trial(warmup=2, steps=5)
        data = Reiterable(3)
        timer = self.timer(device_type="cpu")
        self.assertFalse(timer.done)
        self.assertEqual(self.run_loop(timer, data), [0, 1, 2, 0, 1, 2, 0])
        self.assertTrue(timer.done)
        self.assertEqual(len(data.iterators), 3)
        self.assertEqual(data.earlier_dropped, [True, True, True])
        steps = self.events("step")
        self.assertEqual([e["epoch"] for e in steps], [0, 0, 0, 1, 1, 1, 2])
        self.assertEqual([e["warmup"] for e in steps], [True, True] + [False] * 5)
        self.assertEqual(self.run_loop(timer, data), [], "a second call after done yields nothing")

    def test_tunebench_epochs_ends_each_epoch_early_with_a_fresh_iterator(self):
        self.trial(warmup=1, steps=6, epochs=3)  # 7 batches: 3, 3, 1
        data = Reiterable(100)
        timer = self.timer(device_type="cpu")
        self.assertEqual(self.run_loop(timer, data), [0, 1, 2, 0, 1, 2, 0])
        self.assertEqual([e["epoch"] for e in self.events("step")], [0, 0, 0, 1, 1, 1, 2])
        self.assertEqual(data.earlier_dropped, [True, True, True], "the previous epoch's iterator is dropped first")

    def test_a_one_shot_iterator_just_ends_and_a_later_call_is_a_new_epoch(self):
        self.trial(warmup=0, steps=5)
        timer = self.timer(device_type="cpu")
        self.assertEqual(self.run_loop(timer, OneShot(3)), [0, 1, 2])
        self.assertFalse(timer.done)
        self.assertEqual(self.run_loop(timer, OneShot(3)), [0, 1])
        self.assertTrue(timer.done)
        self.assertEqual([e["epoch"] for e in self.events("step")], [0, 0, 0, 1, 1])

    def test_a_script_with_its_own_epoch_loop_can_break_on_done(self):
        self.trial(warmup=1, steps=3)
        timer = self.timer(device_type="cpu")
        outer = 0
        for _ in range(10):
            outer += 1
            self.run_loop(timer, Reiterable(3))
            if timer.done:
                break
        self.assertEqual((outer, len(self.events("step"))), (1, 4))

    def test_an_empty_iterable_does_not_loop_forever(self):
        self.trial(warmup=0, steps=5)
        timer = self.timer(device_type="cpu")
        self.assertEqual(self.run_loop(timer, Reiterable(0)), [])
        self.assertEqual(self.run_loop(timer, []), [])

    def test_outside_a_trial_it_is_one_plain_pass(self):
        os.environ["TUNEBENCH_TRIAL_EPOCHS"] = "3"  # without TUNEBENCH_STEPS this is no trial
        data = Reiterable(4)
        timer = self.timer(device_type="cpu")
        self.assertEqual(self.run_loop(timer, data), [0, 1, 2, 3])
        self.assertEqual(self.run_loop(timer, data), [0, 1, 2, 3], "the script's own second epoch")
        self.assertFalse(timer.done)
        self.assertEqual([e["epoch"] for e in self.events("step")], [0] * 4 + [1] * 4)
        os.environ.pop("TUNEBENCH_EVENTS", None)
        quiet = tunebench.StepTimer(device_type="cpu")  # no TUNEBENCH_EVENTS: timed, reported nowhere
        self.assertEqual(self.run_loop(quiet, data), [0, 1, 2, 3])
        self.assertEqual(quiet.index, 4)


class BindArgparseTests(CleanEnv):
    def parser(self):
        p = argparse.ArgumentParser()
        p.add_argument("--batch-size", type=int, default=32)
        p.add_argument("--lr", type=float, default=0.1)
        p.add_argument("--amp", action="store_true")
        p.add_argument("--no-shuffle", dest="shuffle", action="store_false")
        p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
        p.add_argument("--name", default="run")
        p.add_argument("--layers", type=int, nargs="+", default=[1])
        p.add_argument("--data", required=True)
        p.add_argument("--size", type=lambda text: tuple(int(n) for n in text.split("x")), default=(8, 8))
        return p

    def test_config_values_become_defaults_and_the_command_line_wins(self):
        os.environ["TUNEBENCH_CONFIG"] = json.dumps({
            "batch_size": 64, "lr": "0.5", "amp": "true", "shuffle": False, "precision": "bf16",
            "name": 7, "layers": [2, "3"], "data": "/d", "size": "32x16", "epochs": 3,
        })
        p = self.parser()
        applied = tunebench.bind_argparse(p)
        self.assertEqual(applied, {"batch_size": 64, "lr": 0.5, "amp": True, "shuffle": False, "precision": "bf16", "name": 7, "layers": [2, 3], "data": "/d", "size": (32, 16)})
        args = p.parse_args([])
        self.assertEqual((args.batch_size, args.lr, args.amp, args.shuffle, args.precision, args.layers, args.data), (64, 0.5, True, False, "bf16", [2, 3], "/d"))
        self.assertFalse(hasattr(args, "epochs"), "config keys without an argument are left alone")
        args = p.parse_args(["--batch-size", "8", "--precision", "fp32", "--data", "/e"])
        self.assertEqual((args.batch_size, args.precision, args.data, args.lr), (8, "fp32", "/e", 0.5))

    def test_outside_a_trial_nothing_changes(self):
        p = self.parser()
        self.assertEqual(tunebench.bind_argparse(p), {})
        args = p.parse_args(["--data", "/d"])
        self.assertEqual((args.batch_size, args.amp, args.shuffle), (32, False, True))
        with self.assertRaises(SystemExit), mock.patch("sys.stderr"):
            p.parse_args([])  # --data is still required

    def test_values_the_arguments_cannot_take_are_invalid_config(self):
        for raw in ({"batch_size": "big"}, {"batch_size": 2.5}, {"precision": "fp8"}, {"amp": "maybe"}, {"size": "big"}):
            with self.assertRaises(tunebench.InvalidConfig, msg=raw):
                tunebench.bind_argparse(self.parser(), tunebench.Config(raw))


class EmptyCacheTests(unittest.TestCase):
    def test_policies_call_as_often_as_they_say(self):
        for policy, expected in (("never", 0), ("every-step", 6), ("every-3", 2), ("on-oom", 0)):
            t = FakeTorch()
            p = tunebench.EmptyCachePolicy(policy, torch=t)
            for i in range(6):
                p.after_step(i)
            self.assertEqual(p.calls, expected, policy)
            self.assertEqual(t.log.count("empty_cache"), expected)

    def test_on_oom_frees_then_retries_once(self):
        t = FakeTorch()
        tunebench.set_torch(t)
        try:
            p = tunebench.EmptyCachePolicy("on-oom", torch=t)
            attempts = []

            def step():
                attempts.append(1)
                if len(attempts) == 1:
                    raise FakeOutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
                return "ok"

            self.assertEqual(p.run(step), "ok")
            self.assertEqual(len(attempts), 2)
            self.assertEqual(p.calls, 1)
            with self.assertRaises(ValueError):
                p.run(lambda: (_ for _ in ()).throw(ValueError("not memory")))
        finally:
            tunebench.set_torch(None)

    def test_rejects_unknown_policies(self):
        for bad in ("sometimes", "every-0", "every-x"):
            with self.assertRaises(tunebench.InvalidConfig):
                tunebench.EmptyCachePolicy(bad, torch=FakeTorch())


class AllocatorAndPrecisionTests(unittest.TestCase):
    def test_allocator_env_is_set_before_the_first_cuda_call(self):
        for key in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):
            os.environ.pop(key, None)
        t = FakeTorch()
        effect = tunebench.apply_allocator_env(tunebench.Config({"alloc_conf": "expandable_segments:True"}))
        t.log.append(("env at first CUDA call", os.environ.get("PYTORCH_CUDA_ALLOC_CONF")))
        t.cuda.is_available()
        self.assertEqual(t.log[0], ("env at first CUDA call", "expandable_segments:True"))
        self.assertEqual(effect, {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "PYTORCH_ALLOC_CONF": "expandable_segments:True"})

    def test_precision_contexts(self):
        t = FakeTorch()
        ctx, scaler = tunebench.precision_context("fp32", torch=t)
        self.assertIsNone(scaler)
        ctx, scaler = tunebench.precision_context("bf16", "cpu", torch=t)
        self.assertEqual(ctx, "autocast-context")
        self.assertIn(("autocast", "cpu", "bf16-dtype"), t.log)
        with self.assertRaises(tunebench.InvalidConfig):
            tunebench.precision_context("fp8", torch=t)


class OomAndMainTests(CleanEnv):
    def test_recognises_oom_by_type_then_message(self):
        self.assertTrue(tunebench.is_oom(MemoryError()))
        self.assertTrue(tunebench.is_oom(RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 8 bytes")))
        self.assertFalse(tunebench.is_oom(RuntimeError("shape mismatch")))

    def test_main_turns_oom_and_rejected_config_into_protocol_exits(self):
        events = tunebench.Events(self.path)

        def oom():
            raise RuntimeError("CUDA out of memory. Tried to allocate 20.00 MiB")

        with self.assertRaises(SystemExit) as exit_oom, mock.patch("sys.stderr"):
            tunebench.main(oom, events)
        self.assertEqual(exit_oom.exception.code, tunebench.OOM_EXIT_CODE)

        def bad():
            tunebench.precision_context("fp8")  # the adapter's own check

        with self.assertRaises(SystemExit) as exit_bad, mock.patch("sys.stderr"):
            tunebench.main(bad, events)
        self.assertEqual(exit_bad.exception.code, tunebench.INVALID_EXIT_CODE)
        self.assertEqual([e["event"] for e in self.events()], ["phase", "oom", "error"])
        self.assertEqual(self.events()[0], {"event": "phase", "at": "failed", "phase": "setup", "epoch": 0, "step": 0, "error": "RuntimeError"})
        self.assertEqual(self.events()[1]["phase"], "setup", "the oom event says where too")
        self.assertIn("fp8", self.events()[2]["message"])

    def test_main_lets_exit_and_interrupt_through(self):
        for error, expected in ((SystemExit(3), SystemExit), (KeyboardInterrupt(), KeyboardInterrupt)):
            with self.assertRaises(expected):
                tunebench.main(lambda e=error: (_ for _ in ()).throw(e), tunebench.Events(self.path))
        self.assertEqual(self.events(), [])

    def run_script(self, body):
        script = os.path.join(self.dir, "train.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(body))
        env = dict(os.environ, PYTHONPATH=ADAPTER, TUNEBENCH_EVENTS=self.path)
        return subprocess.run([sys.executable, script], capture_output=True, text=True, env=env, timeout=60)

    def test_a_value_error_in_the_workload_is_a_crash_with_its_traceback(self):
        r = self.run_script("""
            import tunebench

            def loss(logits, labels):
                raise ValueError("Target size (torch.Size([8])) must be the same as input size (torch.Size([8, 2]))")

            def train():
                loss(None, None)

            tunebench.main(train)
        """)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("Traceback (most recent call last)", r.stderr)
        self.assertIn('in loss\n    raise ValueError("Target size', r.stderr)
        self.assertIn("ValueError: Target size (torch.Size([8])) must be the same", r.stderr)
        self.assertNotIn("invalid configuration", r.stderr)
        self.assertIn("tunebench: ValueError in setup (epoch 0, after 0 steps); the traceback:", r.stderr)
        self.assertEqual(self.events("error"), [], "no error event: that would read as a rejected config")
        self.assertEqual(self.events(), [{"event": "phase", "at": "failed", "phase": "setup", "epoch": 0, "step": 0, "error": "ValueError"}])

    def test_reject_is_invalid_config_exit_87_with_an_error_event(self):
        r = self.run_script("""
            import tunebench

            def train():
                cfg = tunebench.Config({"dim": 30, "heads": 4})
                if cfg.get_int("dim") % cfg.get_int("heads"):
                    tunebench.reject("dim (30) must be a multiple of heads (4)")

            tunebench.main(train)
        """)
        self.assertEqual(r.returncode, tunebench.INVALID_EXIT_CODE, r.stderr)
        self.assertEqual(self.events(), [{"event": "error", "message": "dim (30) must be a multiple of heads (4)"}])
        self.assertIn("tunebench: invalid configuration: dim (30) must be a multiple of heads (4)", r.stderr)
        self.assertNotIn("Traceback", r.stderr)


class TorchHiddenTests(unittest.TestCase):
    """The adapter must work where torch cannot be imported."""

    def test_without_torch(self):
        saved = sys.modules.get("torch")
        sys.modules["torch"] = None  # makes `import torch` raise ImportError
        try:
            self.assertIsNone(tunebench.torch_module())
            p = tunebench.EmptyCachePolicy("every-step")
            p.after_step(0)
            self.assertEqual(p.calls, 0)
            self.assertGreater(tunebench.peak_memory()["peak_bytes"], 0)
            with self.assertRaises(RuntimeError):
                tunebench.precision_context("bf16")
        finally:
            if saved is None:
                del sys.modules["torch"]
            else:
                sys.modules["torch"] = saved


def _real_torch():
    """Debian's torch, or None. Under CI=true a missing torch is a failure, never a skip."""
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        if os.environ.get("CI") == "true":
            raise
        return None
    return torch


REAL_TORCH = _real_torch()


@unittest.skipIf(REAL_TORCH is None, "torch is not installed for this interpreter (apt-get install python3-torch)")
class RealTorchTests(unittest.TestCase):
    """The adapter against real PyTorch on CPU (Debian's python3-torch)."""

    def test_recognises_a_real_cpu_allocator_oom(self):
        torch = REAL_TORCH
        with self.assertRaises(RuntimeError) as caught:
            torch.empty(1 << 50, dtype=torch.uint8)  # a petabyte: the allocator refuses it
        self.assertIn("DefaultCPUAllocator: can't allocate memory", str(caught.exception))
        self.assertTrue(tunebench.is_oom(caught.exception))
        self.assertFalse(tunebench.is_oom(RuntimeError("shape mismatch")))

    def test_on_oom_policy_retries_a_real_oom_once(self):
        torch = REAL_TORCH
        attempts = []

        def step():
            attempts.append(1)
            if len(attempts) == 1:
                torch.empty(1 << 50, dtype=torch.uint8)
            return "ran"

        policy = tunebench.EmptyCachePolicy("on-oom", torch=torch)
        self.assertEqual(policy.run(step), "ran")
        self.assertEqual(len(attempts), 2)
        self.assertEqual(policy.calls, 0, "no CUDA here: empty_cache() is not called, and not counted")
        with self.assertRaises(RuntimeError):
            tunebench.EmptyCachePolicy("never", torch=torch).run(lambda: torch.empty(1 << 50, dtype=torch.uint8))

    def test_dataloader_kwargs_are_accepted_by_a_real_dataloader(self):
        torch = REAL_TORCH
        from torch.utils.data import DataLoader, TensorDataset  # noqa: PLC0415

        data = TensorDataset(torch.arange(32, dtype=torch.float32))
        for raw in ({"num_workers": 0, "prefetch_factor": 4, "persistent_workers": True},
                    {"num_workers": 2, "prefetch_factor": 4, "persistent_workers": True, "pin_memory": False}):
            kwargs = tunebench.Config(raw).dataloader_kwargs()
            batches = [b[0] for b in DataLoader(data, batch_size=8, **kwargs)]
            self.assertEqual(torch.cat(batches).tolist(), list(range(32)))

    def test_bf16_autocast_on_cpu(self):
        torch = REAL_TORCH
        context, scaler = tunebench.precision_context("bf16", "cpu", torch=torch)
        a = torch.ones(4, 4)
        with context:
            out = torch.mm(a, a)
        self.assertEqual(out.dtype, torch.bfloat16)
        self.assertIsNone(scaler, "a GradScaler is for fp16 on CUDA only")
        context, _ = tunebench.precision_context("fp32", "cpu", torch=torch)
        with context:
            self.assertEqual(torch.mm(a, a).dtype, torch.float32)

    def test_step_timer_and_peak_memory_with_real_torch(self):
        torch = REAL_TORCH
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "events.jsonl")
            timer = tunebench.StepTimer(events=tunebench.Events(path), device_type="cpu", torch=torch, warmup_steps=1)
            for batch in timer.batches([torch.randn(64, 64) for _ in range(3)]):
                with timer.step(samples=batch.shape[0]):
                    (batch @ batch).sum().item()
            timer.finish()
            with open(path, encoding="utf-8") as f:
                events = [_untimed(json.loads(line)) for line in f]
        steps = [e for e in events if e["event"] == "step"]
        self.assertEqual([s["warmup"] for s in steps], [True, False, False])
        self.assertTrue(all(s["samples"] == 64 and s["seconds"] >= s["data_wait_seconds"] >= 0 for s in steps))
        memory = events[-2]
        self.assertEqual(memory["device"], "cpu")
        self.assertGreater(memory["peak_address_space_bytes"], memory["peak_rss_bytes"])
        self.assertEqual(events[-1], {"event": "done"})


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@unittest.skipIf(REAL_TORCH is None, "torch is not installed for this interpreter (apt-get install python3-torch)")
class RealTorchLoopTests(CleanEnv):
    """StepTimer with real DataLoaders (worker processes included), real batches and real devices."""

    def numbered(self, n):
        torch = REAL_TORCH

        class Numbered(torch.utils.data.Dataset):  # each sample says which process loaded it
            def __len__(self):
                return n

            def __getitem__(self, i):
                return torch.tensor(i), torch.tensor(os.getpid())

        return Numbered()

    def run_loader(self, loader):
        """(first index of the batch, worker pid) for each batch."""
        timer = self.timer(model=REAL_TORCH.nn.Linear(2, 2))
        seen = []
        for index, pid in timer.batches(loader):
            with timer.step():
                seen.append((int(index[0]), int(pid[0])))
                loader.pids.add(int(pid[0]))
        self.assertTrue(timer.done)
        return seen

    def loader(self, n, **kwargs):
        class Loader(REAL_TORCH.utils.data.DataLoader):
            """Records which earlier workers are still alive when a new epoch's iterator is asked for."""

            pids = set()
            alive_at_iter = []

            def __iter__(self):
                self.alive_at_iter.append(sorted(p for p in self.pids if _alive(p)))
                return super().__iter__()

        return Loader(self.numbered(n), batch_size=4, num_workers=1, **kwargs)

    def test_a_dataloader_with_a_worker_runs_again_at_each_epoch(self):
        self.trial(warmup=1, steps=6)  # 7 batches from an epoch of 3
        loader = self.loader(12)
        seen = self.run_loader(loader)
        self.assertEqual([i for i, _ in seen], [0, 4, 8, 0, 4, 8, 0])
        steps = self.events("step")
        self.assertEqual([e["epoch"] for e in steps], [0, 0, 0, 1, 1, 1, 2])
        self.assertEqual([e["samples"] for e in steps], [4] * 7, "count_samples, where len() says 2")
        pids = [p for _, p in seen]
        self.assertEqual(len(set(pids)), 3, f"a new worker each epoch: {pids}")
        self.assertNotIn(os.getpid(), pids)
        self.assertEqual(loader.alive_at_iter, [[], [], []], "the last epoch's worker had exited")

    def test_tunebench_epochs_drops_the_iterator_and_its_worker(self):
        self.trial(warmup=1, steps=5, epochs=2)  # 6 batches from an epoch of 10: 3 and 3
        loader = self.loader(40)
        seen = self.run_loader(loader)
        self.assertEqual([i for i, _ in seen], [0, 4, 8, 0, 4, 8])
        self.assertEqual([e["epoch"] for e in self.events("step")], [0, 0, 0, 1, 1, 1])
        self.assertEqual(len({p for _, p in seen}), 2)
        self.assertEqual(loader.alive_at_iter, [[], []], "the first epoch's worker was shut down before the second started")

    def test_persistent_workers_outlive_the_epoch(self):
        self.trial(warmup=0, steps=6, epochs=2)
        loader = self.loader(40, persistent_workers=True)
        seen = self.run_loader(loader)
        self.assertEqual([i for i, _ in seen], [0, 4, 8, 0, 4, 8])
        self.assertEqual(len({p for _, p in seen}), 1)
        self.assertEqual(len(loader.alive_at_iter[1]), 1, "the worker was kept")

    def test_counts_real_tuple_dict_and_numpy_batches(self):
        torch = REAL_TORCH
        from torch.utils.data import DataLoader, TensorDataset  # noqa: PLC0415

        ids, mask, y = torch.randint(0, 100, (20, 16)), torch.ones(20, 16), torch.randint(0, 2, (20,))
        records = [{"input_ids": ids[i], "attention_mask": mask[i], "label": y[i]} for i in range(20)]
        timer = self.timer(device_type=torch.device("cpu"))
        for batch in timer.batches(DataLoader(TensorDataset(ids, mask, y), batch_size=8)):
            self.assertEqual(len(batch), 3)
            with timer.step():
                pass
        for batch in timer.batches(DataLoader(records, batch_size=8)):
            self.assertIsInstance(batch, dict)
            with timer.step():
                pass
        for batch in timer.batches([((ids[:5], mask[:5]), y[:5])]):
            with timer.step():
                pass
        self.assertEqual([e["samples"] for e in self.events("step")], [8, 8, 4, 8, 8, 4, 5])
        self.assertEqual(tunebench.count_samples((ids.numpy(), y.numpy())), 20)

    def test_devices_with_real_torch_on_cpu(self):
        torch = REAL_TORCH
        self.assertFalse(torch.cuda.is_available(), "these tests expect a CPU-only torch")
        self.assertEqual(tunebench.StepTimer().device_type, "cpu", "the README's StepTimer() runs on CPU")
        self.assertEqual(tunebench.StepTimer(model=torch.nn.Linear(2, 2)).device_type, "cpu")
        with self.assertRaises(RuntimeError) as caught:
            tunebench.StepTimer(device_type="cuda")
        self.assertNotIsInstance(caught.exception, AssertionError)
        self.assertIn("StepTimer(model=model)", str(caught.exception))


class FakeCudaWithPeaks(FakeCuda):
    """The allocator's peak counter: set by the test, reset by reset_peak_memory_stats()."""

    peak = 0

    def max_memory_allocated(self):
        return self.peak

    def reset_peak_memory_stats(self):
        self.log.append("reset_peak_memory_stats")
        self.peak = 0


class PhaseTests(CleanEnv):
    """on_epoch_end work at the epoch boundaries inside batches(), timer.phase() events, and where
    main() says a failure happened."""

    def loop(self, timer, data):
        for batch in timer.batches(data):
            with timer.step():
                pass

    def test_a_trial_runs_epoch_end_work_at_each_boundary_and_its_end(self):
        self.trial(warmup=1, steps=5, epochs=3)  # 6 batches: 2, 2, 2
        timer = self.timer(device_type="cpu")
        ran = []
        timer.on_epoch_end(lambda epoch: ran.append(("eval", epoch, timer.index)), phase="eval")

        @timer.on_epoch_end(phase="checkpoint")
        def save(epoch):
            ran.append(("checkpoint", epoch, timer.index))

        self.loop(timer, Reiterable(100))
        self.assertTrue(timer.done)
        self.assertEqual(ran, [("eval", 0, 2), ("checkpoint", 0, 2), ("eval", 1, 4), ("checkpoint", 1, 4), ("eval", 2, 6), ("checkpoint", 2, 6)])
        order = [(e["event"], e.get("at"), e.get("phase"), e["epoch"]) for e in self.events()]
        self.assertEqual(order[:8], [
            ("phase", "start", "train", 0), ("step", None, None, 0), ("step", None, None, 0),
            ("phase", "start", "eval", 0), ("phase", "end", "eval", 0),
            ("phase", "start", "checkpoint", 0), ("phase", "end", "checkpoint", 0),
            ("phase", "start", "train", 1),
        ])
        ends = [e for e in self.events("phase") if e["at"] == "end"]
        self.assertEqual(len(ends), 6)
        self.assertTrue(all(e["at"] == "end" and e["seconds"] >= 0 and e["peak_bytes"] > 0 and e["device"] == "cpu" for e in ends), ends)
        self.assertTrue(all(e["peak_scope"] in ("phase", "process") for e in ends))

    def test_an_epoch_that_yields_nothing_runs_no_epoch_end_work(self):
        self.trial(warmup=0, steps=4)
        timer = self.timer(device_type="cpu")
        ran = []
        timer.on_epoch_end(ran.append, phase="eval")
        self.loop(timer, OneShot(3))  # the one-shot iterator ends the call after its 3 batches
        self.loop(timer, OneShot(0))  # a later call that yields nothing is no epoch
        self.assertEqual(ran, [0])

    def test_outside_a_trial_each_pass_ends_with_its_epoch_end_work(self):
        timer = self.timer(device_type="cpu")
        ran = []
        timer.on_epoch_end(ran.append, phase="eval")
        for _ in range(2):
            self.loop(timer, Reiterable(3))
        self.assertEqual(ran, [0, 1])

    def test_phase_names_are_checked(self):
        timer = self.timer(device_type="cpu")
        for bad in ("Eval", "", "eval phase", "x" * 33, None):
            with self.assertRaises(ValueError):
                timer.on_epoch_end(print, phase=bad)
        with self.assertRaises(TypeError):
            timer.on_epoch_end(3, phase="eval")

    def test_cuda_phase_peak_is_its_own_and_the_trial_peak_survives_the_reset(self):
        torch = FakeTorch()
        torch.cuda = FakeCudaWithPeaks(torch.log)
        timer = tunebench.StepTimer(events=tunebench.Events(self.path), device_type="cuda", torch=torch)
        torch.cuda.peak = 900  # the training steps' peak
        with timer.phase("eval"):
            torch.cuda.peak = 300
        end = self.events("phase")[-1]
        self.assertEqual((end["peak_bytes"], end["peak_scope"], end["device"]), (300, "phase", "cuda"))
        timer.finish()
        self.assertEqual(self.events("memory")[0]["peak_bytes"], 900, "finish() reports the larger peak, from before the reset")

    def test_an_exception_in_a_phase_is_tagged_with_the_innermost_phase(self):
        timer = self.timer(device_type="cpu")
        with self.assertRaises(RuntimeError) as caught:
            with timer.phase("checkpoint"):
                with timer.phase("eval"):
                    raise RuntimeError("boom")
        self.assertEqual(caught.exception.tunebench_phase, {"phase": "eval", "epoch": 0, "step": 0})
        self.assertIsNone(timer.current_phase, "the phase is over")
        self.assertEqual([e["at"] for e in self.events("phase")], ["start", "start"], "no end for a failed phase")

    def run_trial_script(self, body, warmup=0, steps=4, epochs=2):
        script = os.path.join(self.dir, "train.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(body))
        env = dict(os.environ, PYTHONPATH=ADAPTER, TUNEBENCH_EVENTS=self.path, TUNEBENCH_WARMUP_STEPS=str(warmup),
                   TUNEBENCH_STEPS=str(steps), TUNEBENCH_TRIAL_EPOCHS=str(epochs))
        return subprocess.run([sys.executable, script], capture_output=True, text=True, env=env, timeout=60)

    def test_main_reports_an_oom_in_eval_with_its_phase_and_full_traceback(self):
        r = self.run_trial_script("""
            import tunebench

            def eval_forward(epoch):
                if epoch == 1:
                    raise MemoryError("eval batch too large")

            def train():
                timer = tunebench.StepTimer(device_type="cpu")
                timer.on_epoch_end(eval_forward, phase="eval")
                for batch in timer.batches([[1, 2]] * 10):
                    with timer.step():
                        pass
                timer.finish()

            tunebench.main(train)
        """)
        self.assertEqual(r.returncode, tunebench.OOM_EXIT_CODE, r.stderr)
        failed = [e for e in self.events("phase") if e["at"] == "failed"]
        self.assertEqual(failed, [{"event": "phase", "at": "failed", "phase": "eval", "epoch": 1, "step": 4, "error": "MemoryError"}])
        oom = self.events("oom")[0]
        self.assertEqual((oom["phase"], oom["epoch"], oom["step"]), ("eval", 1, 4))
        self.assertIn("tunebench: out of memory in eval (epoch 1, after 4 steps); the traceback:", r.stderr)
        self.assertIn("Traceback (most recent call last)", r.stderr)
        self.assertIn('in eval_forward\n    raise MemoryError("eval batch too large")', r.stderr)
        self.assertTrue(r.stderr.rstrip().endswith("MemoryError: eval batch too large"), "the traceback comes last")

    def test_main_says_a_crash_in_the_training_steps_was_in_train(self):
        r = self.run_trial_script("""
            import tunebench

            def train():
                timer = tunebench.StepTimer(device_type="cpu")
                for i, batch in enumerate(timer.batches([[1, 2]] * 10)):
                    with timer.step():
                        if i == 2:
                            raise KeyError("label")

            tunebench.main(train)
        """)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual([(e["at"], e["phase"], e["epoch"]) for e in self.events("phase")], [("start", "train", 0), ("start", "train", 1), ("failed", "train", 1)])
        self.assertEqual(self.events("phase")[-1], {"event": "phase", "at": "failed", "phase": "train", "epoch": 1, "step": 2, "error": "KeyError"})
        self.assertIn("KeyError: 'label'", r.stderr)


class TimelineAndBracketTests(CleanEnv):
    def test_main_marks_its_moments_and_timestamps_steps_and_done(self):
        os.environ["TUNEBENCH_EVENTS"] = self.path
        self.trial(1, 2)

        def train():
            timer = self.timer(device_type="cpu")
            for _ in timer.batches(range(10)):
                with timer.step(samples=1):
                    pass
            timer.finish()

        tunebench.main(train)
        events = self.events(timed=True)
        self.assertEqual([e["name"] for e in events if e["event"] == "mark"], ["imported", "start"])
        times = [e["t"] for e in events if e["event"] in ("mark", "step", "done")]
        self.assertEqual(len(times), 2 + 3 + 1)
        self.assertEqual(times, sorted(times), "the moments come in order")

    def test_a_bracket_session_runs_each_attempt_in_this_process_and_reports_how_it_ended(self):
        control = os.path.join(self.dir, "control")
        attempts = []
        with open(control, "w", encoding="utf-8") as f:
            for batch in (8, 16, 64, 12):
                path = os.path.join(self.dir, f"a{batch}.jsonl")
                attempts.append((batch, path))
                env = {"TUNEBENCH_CONFIG": json.dumps({"batch_size": batch}), "TUNEBENCH_EVENTS": path,
                       "TUNEBENCH_WARMUP_STEPS": "1", "TUNEBENCH_STEPS": "1"}
                f.write(json.dumps({"argv": ["train.py", f"--batch={batch}"], "env": env}) + "\n")
            f.write(json.dumps({"op": "end"}) + "\n")
        os.environ.update({"TUNEBENCH_EVENTS": self.path, "TUNEBENCH_BRACKET": control})
        seen = []

        def train():
            batch = tunebench.config().batch_size
            seen.append((batch, sys.argv[1], os.getpid()))
            if batch > 20:
                raise MemoryError(f"cannot hold {batch}")
            timer = tunebench.StepTimer(device_type="cpu")
            for _ in timer.batches(range(10)):
                with timer.step(samples=batch):
                    pass
            timer.finish()

        tunebench.main(train)
        self.assertEqual([b for b, _, _ in seen], [8, 16, 64, 12], "every attempt ran, in order")
        self.assertEqual({p for _, _, p in seen}, {os.getpid()}, "in this one process")
        self.assertEqual([a for _, a, _ in seen], ["--batch=8", "--batch=16", "--batch=64", "--batch=12"])
        for batch, path in attempts:
            with open(path, encoding="utf-8") as f:
                events = [json.loads(line) for line in f]
            end = events[-1]
            self.assertEqual(end["event"], "attempt")
            self.assertEqual((end["ok"], end["oom"]), (batch <= 20, batch > 20), batch)
            if batch <= 20:
                self.assertEqual(len([e for e in events if e["event"] == "step"]), 2)
            else:
                self.assertIn("cannot hold 64", end["message"])
        # The session's own events: its start and its end.
        self.assertEqual([e["event"] for e in self.events()], ["done"])
        self.assertNotIn("TUNEBENCH_BRACKET", os.environ, "an attempt never sees the session's variable")


if __name__ == "__main__":
    unittest.main()
