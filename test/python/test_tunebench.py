"""Unit tests of the Python adapter, run under /usr/bin/python3 by test/integration/python-adapter.test.ts.
CUDA branches use a stand-in torch that records the order of calls."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness", "workloads", "python"))
import tunebench  # noqa: E402


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


class ConfigTests(unittest.TestCase):
    def test_typed_getters(self):
        c = tunebench.Config({"batch_size": 64, "pin_memory": "true", "lr": "0.1", "precision": "bf16"})
        self.assertEqual(c.batch_size, 64)
        self.assertTrue(c.get_bool("pin_memory"))
        self.assertEqual(c.get_float("lr"), 0.1)
        self.assertEqual(c.get_str("precision"), "bf16")
        with self.assertRaises(ValueError):
            tunebench.Config({"batch_size": 2.5}).batch_size
        with self.assertRaises(ValueError):
            tunebench.Config({"pin_memory": "maybe"}).get_bool("pin_memory")

    def test_reads_the_environment(self):
        os.environ["TUNEBENCH_CONFIG"] = json.dumps({"batch_size": 8})
        try:
            self.assertEqual(tunebench.config().batch_size, 8)
        finally:
            del os.environ["TUNEBENCH_CONFIG"]

    def test_dataloader_kwargs_follow_pytorch_rules(self):
        self.assertEqual(tunebench.Config({"num_workers": 0, "prefetch_factor": 4, "persistent_workers": True}).dataloader_kwargs(), {"num_workers": 0, "pin_memory": False})
        self.assertEqual(
            tunebench.Config({"num_workers": 4, "prefetch_factor": 4, "persistent_workers": True, "pin_memory": True}).dataloader_kwargs(),
            {"num_workers": 4, "pin_memory": True, "prefetch_factor": 4, "persistent_workers": True},
        )


class StepTimerTests(unittest.TestCase):
    def setUp(self):
        self.path = tempfile.mktemp()

    def events(self):
        with open(self.path) as f:
            return [json.loads(line) for line in f]

    def test_separates_data_wait_from_compute(self):
        # Clock reads: batch 1 asked, arrived, step done; batch 2 asked, arrived, step done; end of data.
        ticks = iter([0.0, 0.5, 2.0, 2.0, 2.25, 3.0, 3.0])
        timer = tunebench.StepTimer(events=tunebench.Events(self.path), clock=lambda: next(ticks), warmup_steps=1)
        for batch in timer.batches([[1, 2, 3, 4], [5, 6]]):
            with timer.step(samples=len(batch)):
                pass
        e = self.events()
        self.assertEqual([x["samples"] for x in e], [4, 2])
        self.assertEqual(e[0]["data_wait_seconds"], 0.5)
        self.assertEqual(e[0]["seconds"], 2.0)
        self.assertEqual(e[1]["data_wait_seconds"], 0.25)
        self.assertEqual([x["warmup"] for x in e], [True, False])

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
            with self.assertRaises(ValueError):
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
        with self.assertRaises(ValueError):
            tunebench.precision_context("fp8", torch=t)


class OomAndMainTests(unittest.TestCase):
    def test_recognises_oom_by_type_then_message(self):
        self.assertTrue(tunebench.is_oom(MemoryError()))
        self.assertTrue(tunebench.is_oom(RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 8 bytes")))
        self.assertFalse(tunebench.is_oom(RuntimeError("shape mismatch")))

    def test_main_turns_oom_and_bad_config_into_protocol_exits(self):
        path = tempfile.mktemp()
        events = tunebench.Events(path)

        def oom():
            raise RuntimeError("CUDA out of memory. Tried to allocate 20.00 MiB")

        with self.assertRaises(SystemExit) as exit_oom:
            tunebench.main(oom, events)
        self.assertEqual(exit_oom.exception.code, tunebench.OOM_EXIT_CODE)

        def bad():
            raise ValueError("precision: expected fp32, bf16 or fp16, got 'fp8'")

        with self.assertRaises(SystemExit) as exit_bad:
            tunebench.main(bad, events)
        self.assertEqual(exit_bad.exception.code, tunebench.INVALID_EXIT_CODE)
        with open(path) as f:
            kinds = [json.loads(line)["event"] for line in f]
        self.assertEqual(kinds, ["oom", "error"])


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
                events = [json.loads(line) for line in f]
        steps = [e for e in events if e["event"] == "step"]
        self.assertEqual([s["warmup"] for s in steps], [True, False, False])
        self.assertTrue(all(s["samples"] == 64 and s["seconds"] >= s["data_wait_seconds"] >= 0 for s in steps))
        memory = events[-2]
        self.assertEqual(memory["device"], "cpu")
        self.assertGreater(memory["peak_address_space_bytes"], memory["peak_rss_bytes"])
        self.assertEqual(events[-1], {"event": "done"})


if __name__ == "__main__":
    unittest.main()
