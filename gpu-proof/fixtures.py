"""The GPU proof kit's fixtures from PyTorch: versions, torch.cuda.mem_get_info, the card under load, and
a real OOM (its message and the exit status of a process that does not catch it). Writes JSON and text
files into the folder given; on a machine without CUDA (the rehearsal) it records the CPU allocator's
OOM under an address-space cap instead, and says so.

  fixtures.py FOLDER [--load SECONDS]

One child process does all the CUDA work, so the step pays for importing torch and starting CUDA once:
it writes torch.json (versions, device, mem_get_info), creates FOLDER/loading and runs matrix products for
--load seconds (the kit samples nvidia-smi meanwhile), then allocates 1 GiB at a time until it runs out,
without catching it. The versions of Lightning and Accelerate come from their packages' metadata: nothing
is imported for them (importing Lightning alone takes seconds).
"""

import argparse
import json
import os
import subprocess
import sys
from importlib import metadata


def versions():
    out = {"python": sys.version.split()[0]}
    for name in ("torch", "lightning", "pytorch_lightning", "accelerate"):
        try:
            out[name] = metadata.version(name.replace("_", "-"))
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


CHILD = """
import json, os, sys, time
import torch
folder, seconds = sys.argv[1], float(sys.argv[2])
cuda = torch.cuda.is_available()
device = "cuda" if cuda else "cpu"
facts = {"torch": torch.__version__, "cuda": getattr(torch.version, "cuda", None), "cuda_available": cuda}
if cuda:
    facts["device_name"] = torch.cuda.get_device_name(0)
    facts["capability"] = list(torch.cuda.get_device_capability(0))
    free, total = torch.cuda.mem_get_info()
    facts["mem_get_info"] = {"free_bytes": free, "total_bytes": total}
with open(os.path.join(folder, "torch.json"), "w", encoding="utf-8") as f:
    json.dump(facts, f, indent=2)
n = 8192 if cuda else 256
a = torch.randn(n, n, device=device)
open(os.path.join(folder, "loading"), "w").close()
t = time.time()
while time.time() - t < seconds:
    (a @ a).sum().item()
del a
blocks = []
while True:
    blocks.append(torch.empty(2**30, dtype=torch.uint8, device=device))  # 1 GiB at a time, uncaught
"""


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder")
    p.add_argument("--load", type=float, default=3.0)
    p.add_argument("--cpu", action="store_true", help="no CUDA here: cap the child's address space (3 GiB)")
    a = p.parse_args()
    os.makedirs(a.folder, exist_ok=True)
    with open(os.path.join(a.folder, "versions.json"), "w", encoding="utf-8") as f:
        json.dump(versions(), f, indent=2)
    command = [sys.executable, "-c", CHILD, a.folder, str(a.load)]
    if a.cpu:
        command = ["prlimit", f"--as={3 * 2**30}", "--"] + command
    child = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    with open(os.path.join(a.folder, "oom-stderr.txt"), "w", encoding="utf-8") as f:
        f.write(child.stderr[-20000:])
    with open(os.path.join(a.folder, "oom.json"), "w", encoding="utf-8") as f:
        json.dump({"exit_status": child.returncode, "device": "cpu" if a.cpu else "cuda",
                   "last_line": (child.stderr.strip().splitlines() or [""])[-1][:2000]}, f, indent=2)
    print(json.dumps({"oom_exit_status": child.returncode}))


if __name__ == "__main__":
    main()
